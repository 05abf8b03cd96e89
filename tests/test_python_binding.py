"""python/tjit.py (ctypes over libtjit.so, arrays lent by address) on
NumPy arrays: values against NumPy's, memory shared both ways, no
reference kept (each array's reference count back where it was), and
tjit's errors raised as TjitError. NumPy only: the suite must not need
torch. Run by meson with TJIT_LIB set to the build's libtjit.so."""
import os
import resource
import sys
import threading
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import tjit  # noqa: E402

ADD_RELU = """graph(%x : f32[2, 3], %y : f32[3]):
    %add = aten.add.Tensor(%x, %y)
    %relu = aten.relu.default(%add)
    %gt = aten.gt.Scalar(%relu, 2)
    return (%relu, %gt)
"""
X = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
Y = np.array([1, 1, 0.5], np.float32)
RELU = np.array([[0, 3, 0], [5, 0, 6.5]], np.float32)


class Binding(unittest.TestCase):
    def setUp(self):
        self.plan = tjit.Graph(ADD_RELU).compile()

    def test_runs_on_numpy_arrays(self):
        self.assertEqual(self.plan.input_types, [("float32", (2, 3)), ("float32", (3,))])
        self.assertEqual(self.plan.output_types, [("float32", (2, 3)), ("bool", (2, 3))])
        relu, gt = self.plan(X, Y)
        np.testing.assert_array_equal(relu, RELU)
        self.assertEqual(gt.dtype, np.bool_)
        np.testing.assert_array_equal(gt, RELU > 2)

    def test_strided_and_read_only_inputs(self):
        xt = np.ascontiguousarray(X.T).T  # X's values, column-major
        self.assertFalse(xt.flags.c_contiguous)
        np.testing.assert_array_equal(self.plan(xt, Y)[0], RELU)
        ro = X.copy()
        ro.flags.writeable = False
        np.testing.assert_array_equal(self.plan(ro, Y)[0], RELU)

    def test_outputs_into_the_callers_arrays(self):
        out = [np.full((2, 3), 7, np.float32), np.zeros((2, 3), np.bool_)]
        got = self.plan(X, Y, out=out)
        self.assertIs(got[0], out[0])
        np.testing.assert_array_equal(out[0], RELU)
        np.testing.assert_array_equal(out[1], RELU > 2)

    def test_no_reference_is_kept(self):
        before = [sys.getrefcount(a) for a in (X, Y)]
        for _ in range(3):
            self.plan(X, Y)
        with self.assertRaises(tjit.TjitError):  # the second input fails after the first was wrapped
            self.plan(X, Y.astype(np.int32))
        self.assertEqual([sys.getrefcount(a) for a in (X, Y)], before)

    def test_inputs_updated_in_place_are_the_callers(self):
        plan = tjit.Graph("graph(%x : f32[3]):\n"
                          "    %add_ = aten.add_.Tensor(%x, 1)\n"
                          "    %mul = aten.mul.Tensor(%add_, 2)\n"
                          "    return (%mul,)\n").compile()
        x = np.array([1, 2, 3], np.float32)
        (doubled,) = plan(x)
        np.testing.assert_array_equal(x, [2, 3, 4])
        np.testing.assert_array_equal(doubled, [4, 6, 8])

    def test_decomposed_graph_gives_the_same_values(self):
        lowered = tjit.Graph(ADD_RELU).decompose()
        self.assertIn("aten.maximum.default", str(lowered))
        self.assertNotIn("aten.relu", str(lowered))
        relu, gt = lowered.compile()(X, Y)
        np.testing.assert_array_equal(relu, RELU)
        np.testing.assert_array_equal(gt, RELU > 2)

    def test_each_call_reads_the_arrays_memory_of_then(self):
        plan = tjit.Graph(ADD_RELU).compile()
        y = Y.copy()
        np.testing.assert_array_equal(plan(X, y)[0], RELU)
        y += 1  # in place: the next call reads the new values
        np.testing.assert_array_equal(plan(X, y)[0], np.maximum(X + Y + 1, 0))
        np.testing.assert_array_equal(plan(X, Y * 0)[0], np.maximum(X, 0))
        grown = np.zeros(6, np.float32)
        np.testing.assert_array_equal(plan(X, grown[::2])[0], np.maximum(X, 0))  # strided view of a larger buffer
        grown[::2] = 1
        np.testing.assert_array_equal(plan(X, grown[::2])[0], np.maximum(X + 1, 0))

    def test_decompose_frees_its_table(self):
        graph = tjit.Graph(ADD_RELU)
        graph.decompose()  # the first call's allocations stay (caches)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for _ in range(300):
            graph.decompose()
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        self.assertLess(grown, 4096, "KiB for 300 calls (300 leaked core tables took 21 MiB)")

    def test_errors_carry_tjits_message(self):
        cases = [
            (lambda: tjit.Graph("graph(%x : f32[2]):\n    %y = aten.nope.default(%x)\n    return (%y,)\n"),
             "unknown operator aten::nope.default"),
            (lambda: self.plan(X), "1 inputs given, the graph takes 2"),
            (lambda: self.plan(X.astype(np.float64), Y), "compiled for float32[2, 3]"),
            (lambda: self.plan(X.astype(np.int32), Y), "input 0 is int32"),
            (lambda: self.plan(X, Y, out=[np.empty((3, 2), np.float32), np.empty((2, 3), bool)]), "[3, 2]"),
        ]
        for call, needle in cases:
            with self.assertRaises(tjit.TjitError) as caught:
                call()
            self.assertIn(needle, str(caught.exception))

    def test_an_output_over_an_input_gets_the_inputs_values(self):
        mm = tjit.Graph("graph(%a : f32[2, 2], %b : f32[2, 2]):\n"
                        "    %mm = aten.mm.default(%a, %b)\n"
                        "    return (%mm,)\n").compile()
        a = np.array([[1, 2], [3, 4]], np.float32)
        want = a @ a
        mm(a, a, out=[a])  # one array three times: the product is copied in after it is computed
        np.testing.assert_array_equal(a, want)
        m = np.array([[1, 2], [3, 4]], np.float32)
        mm(m.copy(), m[:], out=[m])  # m[:] is another array over m's memory
        np.testing.assert_array_equal(m, want)

    def test_arrays_tjit_cannot_use_are_copied_when_only_read(self):
        x = np.arange(3, dtype=np.float32)
        plan = tjit.Graph("graph(%x : f32[3], %y : f32[3]):\n"
                          "    %add = aten.add.Tensor(%x, %y)\n"
                          "    return (%add,)\n").compile()
        np.testing.assert_array_equal(plan(x[::-1], x)[0], [2, 2, 2])
        scale = tjit.Graph("graph(%x : f32[]):\n    %mul = aten.mul.Tensor(%x, 3)\n    return (%mul,)\n").compile()
        self.assertEqual(scale(np.float32(2))[0], 6)  # a NumPy scalar
        ro = np.zeros(3, np.float32)
        ro.flags.writeable = False
        with self.assertRaisesRegex(tjit.TjitError, "output 0 is read-only"):
            plan(x, x, out=[ro])
        with self.assertRaisesRegex(tjit.TjitError, "output 0 is read-only"):
            plan(x, x, out=[np.broadcast_to(np.zeros(1, np.float32), (3,))])
        with self.assertRaisesRegex(tjit.TjitError, "output 0 is a view with negative strides"):
            plan(x, x, out=[np.zeros(3, np.float32)[::-1]])
        add_ = tjit.Graph("graph(%x : f32[3]):\n"
                          "    %add_ = aten.add_.Tensor(%x, 1)\n"
                          "    return (%add_,)\n").compile()
        row = tjit.Graph("graph(%x : f32[1, 3]):\n    %mul = aten.mul.Tensor(%x, 2)\n    return (%mul,)\n").compile()
        flipped = np.zeros((1, 3), np.float32)[::-1]  # stride -12 on its dim of size 1, which is never used
        row(x.reshape(1, 3), out=[flipped])
        np.testing.assert_array_equal(flipped, [[0, 2, 4]])
        odd = np.frombuffer(np.zeros(13, np.uint8).data, np.float32, 3, offset=1)  # writable, not aligned
        np.testing.assert_array_equal(plan(odd, x)[0], x)
        for frozen, reason in [(ro, "read-only"), (x[::-1], "negative strides"), (odd, "not aligned to its elements")]:
            with self.assertRaisesRegex(tjit.TjitError, "input 0 is .*%s, and tjit writes it" % reason):
                add_(frozen)
        np.testing.assert_array_equal(x, [0, 1, 2])

    def test_a_refused_input_stops_the_call_before_any_write(self):
        """Refused before the run: the graph's other in-place updates are not half done."""
        both = tjit.Graph("graph(%a : f32[3], %b : f32[3]):\n"
                          "    %add_ = aten.add_.Tensor(%a, 1)\n"
                          "    %mul_ = aten.mul_.Tensor(%b, 2)\n"
                          "    return (%add_, %mul_)\n").compile()
        a, b = np.zeros(3, np.float32), np.ones(3, np.float32)
        b.flags.writeable = False
        for first_call in (True, False):
            with self.assertRaisesRegex(tjit.TjitError, "input 1 is read-only, and tjit writes it"):
                both(a, b)
            np.testing.assert_array_equal(a, [0, 0, 0], "first call: %s" % first_call)

    def test_numpy_scalars_and_out_that_tjit_would_write_into_a_copy_are_refused(self):
        scale = tjit.Graph("graph(%x : f32[]):\n    %mul = aten.mul.Tensor(%x, 3)\n    return (%mul,)\n").compile()
        with self.assertRaisesRegex(tjit.TjitError, "output 0 is a NumPy scalar .*, and tjit writes it"):
            scale(np.float32(2), out=[np.float32(0)])
        with self.assertRaisesRegex(tjit.TjitError, "out= takes a list of arrays, one per output, not ndarray"):
            scale(np.float32(2), out=np.zeros((), np.float32))
        got = np.zeros((), np.float32)
        scale(np.float32(2), out=[got])
        self.assertEqual(got, 6)

    def test_what_tjit_cannot_take_is_named(self):
        cases = [((1.0, Y), "input 0 is float, not a NumPy array"),
                 (([1, 2, 3], Y), "input 0 is list"),
                 ((X.astype(np.uint32), Y), "input 0 is uint32; tjit has float32, float64, int64, bool, int32"),
                 ((X.astype(np.float16), Y), "input 0 is float16[2, 3], the plan was compiled for float32[2, 3]")]
        for args, needle in cases:
            with self.assertRaises(tjit.TjitError) as caught:
                self.plan(*args)
            self.assertIn(needle, str(caught.exception))

    def test_storage_dtypes_in_and_out(self):
        """uint8 pixels in, float32 and float16 out: tjit converts the storage dtypes."""
        plan = tjit.Graph("""graph(%x : u8[2, 2]):
    %f = aten._to_copy.default(%x, dtype = torch.float32)
    %s = aten.mul.Tensor(%f, 0.5)
    %h = aten._to_copy.default(%s, dtype = torch.float16)
    return (%s, %h)
""").compile()
        self.assertEqual(plan.input_types, [("uint8", (2, 2))])
        self.assertEqual(plan.output_types, [("float32", (2, 2)), ("float16", (2, 2))])
        pixels = np.array([[0, 3], [255, 128]], np.uint8)
        s, h = plan(pixels)
        np.testing.assert_array_equal(s, pixels.astype(np.float32) * 0.5)
        self.assertEqual(h.dtype, np.float16)
        np.testing.assert_array_equal(h, (pixels.astype(np.float32) * 0.5).astype(np.float16))

    def test_one_plan_called_from_several_threads(self):
        mm = tjit.Graph("graph(%a : f32[128, 128]):\n"
                        "    %mm = aten.mm.default(%a, %a)\n"
                        "    return (%mm,)\n").compile()
        a = np.random.default_rng(0).standard_normal((128, 128)).astype(np.float32)
        want, failures = mm(a)[0], []

        def work():
            try:
                for _ in range(100):
                    np.testing.assert_array_equal(mm(a)[0], want)
            except Exception as e:  # noqa: BLE001 (reported by the main thread)
                failures.append(e)
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_manual_seed_repeats_a_plans_draws(self):
        dropout = tjit.Graph("graph(%x : f32[64]):\n"
                             "    %d, %mask = aten.native_dropout.default(%x, 0.5, True)\n"
                             "    return (%d,)\n").compile()
        x = np.ones(64, np.float32)
        tjit.manual_seed(7)
        (first,) = dropout(x)
        tjit.manual_seed(7)
        (again,) = dropout(x)
        (other,) = dropout(x)
        np.testing.assert_array_equal(first, again)
        self.assertFalse(np.array_equal(first, other))
        self.assertEqual(set(np.unique(first)), {0.0, 2.0})

    def test_threads(self):
        n = tjit.get_num_threads()
        tjit.set_num_threads(1)
        self.assertEqual(tjit.get_num_threads(), 1)
        np.testing.assert_array_equal(self.plan(X, Y)[0], RELU)
        tjit.set_num_threads(n)


if __name__ == "__main__":
    unittest.main()
