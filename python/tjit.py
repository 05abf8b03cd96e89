"""tjit from Python, in-process: graph text parsed, lowered with the core
decomposition table, compiled into a plan and run on NumPy arrays or
PyTorch tensors, whose memory the plan reads and writes in place, without
a copy: a call passes their addresses (tj_plan_run_ctx_memory), which costs
well under a microsecond per array. ctypes over libtjit.so; the standard
library only (NumPy or torch for the arrays).

    import numpy as np, tjit
    plan = tjit.Graph(text).compile()            # or Graph.load(path); .decompose() first
    (y,) = plan(x, w)                            # new arrays of the kind of the inputs
    plan(x, w, out=[y])                          # into arrays of the caller's

The library: $TJIT_LIB, else this checkout's build/libtjit.so, else the
installed libtjit.so. Every failure raises TjitError with tjit's message."""
import ctypes
import ctypes.util
import os
import sys

# tj_dtype's order (include/tjit/core.h); from int32 on, storage dtypes: tjit moves and converts them only
DTYPES = ("float32", "float64", "int64", "bool", "int32", "uint8", "int8", "int16", "float16", "bfloat16")
MAX_DIMS = 8  # TJ_MAX_DIMS


class TjitError(RuntimeError):
    """A tjit call failed; the message is tj_last_error()'s."""


def _library_path():
    if os.environ.get("TJIT_LIB"):
        return os.environ["TJIT_LIB"]
    built = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "libtjit.so")
    return built if os.path.exists(built) else ctypes.util.find_library("tjit") or "libtjit.so"


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)  # compile and run release the GIL
    except OSError as e:  # ./run main builds the tjit command only
        raise OSError("%s (build the shared library: meson compile -C build, or set TJIT_LIB)" % e) from None
    p, i = ctypes.c_void_p, ctypes.c_int
    for name, res, args in [
        ("tj_last_error", ctypes.c_char_p, []),
        ("tj_graph_parse", p, [ctypes.c_char_p]),
        ("tj_graph_free", None, [p]),
        ("tj_graph_num_inputs", i, [p]),
        ("tj_graph_num_outputs", i, [p]),
        ("tj_graph_to_string", p, [p]),
        ("tj_core_decompositions", p, []),
        ("tj_decomp_table_free", None, [p]),
        ("tj_graph_decompose", p, [p, p]),
        ("tj_compile", p, [p, p]),
        ("tj_plan_free", None, [p]),
        ("tj_plan_num_inputs", i, [p]),
        ("tj_plan_num_outputs", i, [p]),
        ("tj_plan_input_type", i, [p, i, ctypes.POINTER(i), ctypes.POINTER(i), ctypes.POINTER(ctypes.c_int64)]),
        ("tj_plan_output_type", i, [p, i, ctypes.POINTER(i), ctypes.POINTER(i), ctypes.POINTER(ctypes.c_int64)]),
        ("tj_plan_writes_input", ctypes.c_bool, [p, i]),
        ("tj_plan_context_new", p, [p]),
        ("tj_plan_run_ctx_memory", i, [p, ctypes.POINTER(p), ctypes.POINTER(ctypes.c_int64)]),
        ("tj_set_num_threads", None, [i]),
        ("tj_manual_seed", None, [ctypes.c_uint64]),
        ("tj_get_num_threads", i, []),
    ]:
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    libc = ctypes.CDLL(None)
    libc.free.restype, libc.free.argtypes = None, [p]
    return lib, libc.free


_lib, _free = _load()


def _fail(what):
    message = (_lib.tj_last_error() or b"").decode()
    raise TjitError(message if message.startswith(what) else "%s: %s" % (what, message))


def set_num_threads(n):
    """Threads inside kernels (tj_set_num_threads), for eager calls and plans."""
    _lib.tj_set_num_threads(int(n))


def get_num_threads():
    return _lib.tj_get_num_threads()


def manual_seed(seed):
    """Seeds tjit's generator (tj_manual_seed), which a plan's random steps
    (dropout, bernoulli_) draw from: torch.manual_seed does not reach it."""
    _lib.tj_manual_seed(int(seed))


class Graph:
    """A tjit graph (tj_graph) from its text, as `tjit graph` prints it and
    tjit_fx.to_tjit_text writes it."""

    def __init__(self, text, _handle=None):
        self._handle = _handle or _lib.tj_graph_parse(text.encode())
        if not self._handle:
            _fail("tj_graph_parse")

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(f.read())

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.tj_graph_free(self._handle)

    def __str__(self):
        s = _lib.tj_graph_to_string(self._handle)
        if not s:
            _fail("tj_graph_to_string")
        try:
            return ctypes.string_at(s).decode()
        finally:
            _free(s)

    @property
    def num_inputs(self):
        return _lib.tj_graph_num_inputs(self._handle)

    @property
    def num_outputs(self):
        return _lib.tj_graph_num_outputs(self._handle)

    def decompose(self):
        """The graph lowered through the core decomposition table
        (tj_graph_decompose with tj_core_decompositions: torch._decomp's
        core_aten_decompositions), as `tjit run --decompose core`."""
        table = _lib.tj_core_decompositions()  # a new table each call
        handle = table and _lib.tj_graph_decompose(self._handle, table)
        _lib.tj_decomp_table_free(table)
        if not handle:
            _fail("tj_graph_decompose")
        return Graph(None, _handle=handle)

    def compile(self):
        """A Plan for the graph's input types (tj_compile, default options)."""
        return Plan(self)


def _is_torch(x):
    torch = sys.modules.get("torch")  # imported by whoever made a torch tensor
    return torch is not None and isinstance(x, torch.Tensor)


_dtype_names = {}  # numpy.dtype('float32') or torch.float32 -> "float32": str() of a NumPy dtype takes microseconds


def _dtype_name(dtype):
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype).replace("torch.", "")
    return name


def _count_write(x):
    """Counts tjit's write into torch tensor x in its version counter, as
    an in-place operator would (tjit's writes are unseen by torch): autograd
    then refuses a saved value that tjit overwrote instead of using it."""
    import torch
    with torch.no_grad():
        x.as_strided((0,), (1,)).zero_()  # in place on an empty view of x: no element written


def _lend(x, what, want, written):
    """(array, address, strides) for passing x (a NumPy array or a torch
    tensor of the type `want`, (dtype name, shape)) to tj_plan_run_ctx_memory:
    x itself or, when tjit cannot use x's memory as it is and does not write
    it, a copy that the caller keeps for the call; the address of its first
    element; its strides in elements, or None when contiguous. what
    ("input 2") names x in messages. written: tjit writes x (an out= array,
    or an input the graph updates in place); what torch would not let an
    in-place operator write is refused: a tensor that requires grad while
    grad mode is on (autograd cannot follow tjit's write), an inference
    tensor outside inference mode, a NumPy scalar (a copy)."""
    torch = sys.modules.get("torch")  # imported by whoever made a torch tensor
    if torch is not None and isinstance(x, torch.Tensor):
        _check_type(x, what, want)
        if not x.is_cpu or x.layout is not torch.strided:
            raise TjitError("plan: %s is a tensor on %s with layout %s; tjit takes strided CPU tensors"
                            % (what, x.device, x.layout))
        if x.is_neg():  # its memory holds -x
            x = _copy(x, what, "a negated view (as z.conj().imag)", written).resolve_neg()
        if written and x.requires_grad and torch.is_grad_enabled():
            raise TjitError("plan: %s requires grad, and tjit writes it (an out= argument, or an input the graph "
                            "updates in place), which autograd cannot follow (call under torch.no_grad())" % what)
        if written and x.is_inference() and not torch.is_inference_mode_enabled():
            raise TjitError("plan: %s is an inference tensor, and tjit writes it: torch updates those in "
                            "inference mode only" % what)
        return x, x.data_ptr(), None if x.is_contiguous() else x.stride()
    if type(x).__module__ != "numpy":
        raise TjitError("plan: %s is %s, not a NumPy array or a torch tensor" % (what, type(x).__name__))
    import numpy
    if not isinstance(x, numpy.ndarray):
        x = numpy.asarray(_copy(x, what, "a NumPy scalar (a copy for tjit)", written))
    _check_type(x, what, want)
    if not x.flags.writeable:
        x = _copy(x, what, "read-only", written).copy()
    elif not x.flags.aligned:
        x = _copy(x, what, "not aligned to its elements", written).copy()
    elif any(s < 0 and n > 1 for s, n in zip(x.strides, x.shape)):
        x = _copy(x, what, "a view with negative strides", written).copy()
    return x, x.ctypes.data, None if x.flags.c_contiguous else tuple(s // x.itemsize for s in x.strides)


def _check_type(x, what, want):
    dtype = _dtype_name(x.dtype)
    if dtype not in DTYPES:
        raise TjitError("plan: %s is %s; tjit has %s" % (what, dtype, ", ".join(DTYPES)))
    if dtype != want[0] or tuple(x.shape) != want[1]:
        raise TjitError("plan: %s is %s%s, the plan was compiled for %s%s"
                        % (what, dtype, list(x.shape), want[0], list(want[1])))


def _copy(x, what, reason, written):
    """x, which tjit cannot use as it is for `reason`, to be copied when
    only read; refused when tjit writes it (the write would be lost)."""
    if written:
        raise TjitError("plan: %s is %s, and tjit writes it (an output, or an input the graph updates in place)"
                        % (what, reason))
    return x


def _types(handle, count, query):
    types = []
    for k in range(count):
        dtype, ndim, shape = ctypes.c_int(), ctypes.c_int(), (ctypes.c_int64 * MAX_DIMS)()
        if query(handle, k, ctypes.byref(dtype), ctypes.byref(ndim), shape) != 0:
            _fail(query.__name__)
        types.append((DTYPES[dtype.value], tuple(shape[:ndim.value])))
    return types


class Plan:
    """A compiled graph (tj_plan): runs with no dispatch and no allocation
    but its outputs', on inputs of the types compiled for."""

    def __init__(self, graph):
        self.graph = graph  # the plan reads the graph's constants
        self._handle = _lib.tj_compile(graph._handle, None)
        if not self._handle:
            _fail("tj_compile")
        # a context runs one thread at a time (a second run is refused): a
        # call takes an idle one, or makes one; tj_plan_free frees them all.
        # list.pop and append hold the GIL.
        self._idle_contexts = []
        self.input_types = _types(self._handle, _lib.tj_plan_num_inputs(self._handle), _lib.tj_plan_input_type)
        self.output_types = _types(self._handle, _lib.tj_plan_num_outputs(self._handle), _lib.tj_plan_output_type)
        # the inputs a run writes: never copies (the write would be lost), version-counted in torch
        self._writes = {k for k in range(len(self.input_types)) if _lib.tj_plan_writes_input(self._handle, k)}
        slots = max(len(self.input_types) + len(self.output_types), 1)
        self._addresses, self._strides = ctypes.c_void_p * slots, ctypes.c_int64 * (slots * MAX_DIMS)

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.tj_plan_free(self._handle)

    def __call__(self, *inputs, out=None):
        """Runs the plan on `inputs` (NumPy arrays or torch tensors of the
        compiled dtypes and shapes, any strides; inputs the graph updates
        in place are updated in the caller's memory) and returns the outputs:
        `out` (a list of arrays or tensors of the output types) when given,
        else new ones of the inputs' kind (torch when any input is a torch
        tensor; a plan without inputs gives NumPy arrays). Arrays may share
        memory (an `out` that is an input). What tjit cannot use as it is
        (a read-only NumPy array, one with a negative stride or misaligned,
        a torch tensor with its negative bit set) is copied when it is an
        input only read, refused as an output or an input the graph writes.
        As torch's own in-place and out= operators, tjit's writes into torch
        tensors count in their version counters, and a tensor tjit writes
        (an `out`, or an input the graph updates) that requires grad is
        refused while grad mode is on, as an inference tensor outside
        inference mode. Threads may call one
        plan at once: each call runs on a context of its own. The call keeps
        no reference to the arrays."""
        n, types = len(inputs), self.input_types
        if n != len(types):
            raise TjitError("plan: %d inputs given, the graph takes %d" % (n, len(types)))
        if out is not None and not isinstance(out, (list, tuple)):
            raise TjitError("plan: out= takes a list of arrays, one per output, not %s" % type(out).__name__)
        written = list(out or [])  # the caller's tensors tjit writes (new outputs have no history to guard)
        if out is None:
            out = _empties(self.output_types, inputs)
        elif len(out) != len(self.output_types):
            raise TjitError("plan: %d outputs given, the graph returns %d" % (len(out), len(self.output_types)))
        lent = [_lend(x, "input %d" % k, types[k], k in self._writes) for k, x in enumerate(inputs)]
        lent += [_lend(x, "output %d" % k, self.output_types[k], True) for k, x in enumerate(out)]
        strides = None
        if any(s is not None for _, _, s in lent):
            strides = self._strides()
            for k, (x, _, s) in enumerate(lent):
                strides[k * MAX_DIMS:k * MAX_DIMS + x.ndim] = s if s is not None else _contiguous(x.shape)
        context = self._idle_contexts.pop() if self._idle_contexts else _lib.tj_plan_context_new(self._handle)
        if not context:
            _fail("tj_plan_context_new")
        try:
            if _lib.tj_plan_run_ctx_memory(context, self._addresses(*[a for _, a, _ in lent]), strides) != 0:
                _fail("tj_plan_run_memory")
        finally:
            self._idle_contexts.append(context)
        for x in written + [inputs[k] for k in self._writes]:
            if _is_torch(x):
                _count_write(x)
        return list(out)


def _contiguous(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return strides[::-1]


def _empties(types, like):
    """New arrays of `types`, torch tensors when any of `like` is one, else NumPy arrays."""
    if any(_is_torch(x) for x in like):
        import torch
        return [torch.empty(shape, dtype=getattr(torch, dtype)) for dtype, shape in types]
    import numpy
    return [numpy.empty(shape, dtype=dtype) for dtype, shape in types]
