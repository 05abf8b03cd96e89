"""tjit from Python, in-process: graph text parsed, lowered with the core
decomposition table, compiled into a plan and run on NumPy arrays or
PyTorch tensors, whose memory the plan reads and writes in place through
DLPack (tj_tensor_from_dlpack), without a copy. ctypes over libtjit.so;
the standard library only (NumPy or torch for the arrays).

    import numpy as np, tjit
    plan = tjit.Graph(text).compile()            # or Graph.load(path); .decompose() first
    (y,) = plan(x, w)                            # new arrays of the kind of the inputs
    plan(x, w, out=[y])                          # into arrays of the caller's

The library: $TJIT_LIB, else this checkout's build/libtjit.so, else the
installed libtjit.so. Every failure raises TjitError with tjit's message."""
import ctypes
import ctypes.util
import os
import threading

DTYPES = ("float32", "float64", "int64", "bool")  # tj_dtype's order (include/tjit/core.h)
MAX_DIMS = 8  # TJ_MAX_DIMS
DL_BOOL = 6  # DLPack 0.8's kDLBool: neither torch 1.13 nor NumPy 1.24 export bool, so a uint8 view is relabelled


class TjitError(RuntimeError):
    """A tjit call failed; the message is tj_last_error()'s."""


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):  # dlpack.h's DLTensor, the head of DLManagedTensor
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int), ("device_id", ctypes.c_int),
                ("ndim", ctypes.c_int), ("dtype", _DLDataType), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


def _library_path():
    if os.environ.get("TJIT_LIB"):
        return os.environ["TJIT_LIB"]
    built = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "libtjit.so")
    return built if os.path.exists(built) else ctypes.util.find_library("tjit") or "libtjit.so"


def _load():
    path = _library_path()
    # compile and run release the GIL (CDLL); tj_tensor_release holds it
    # (PyDLL): it may run a Python producer's DLPack deleter (NumPy's)
    try:
        lib, held = ctypes.CDLL(path), ctypes.PyDLL(path)
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
        ("tj_plan_run_ctx_into", i, [p, ctypes.POINTER(p), i, ctypes.POINTER(p)]),
        ("tj_tensor_from_dlpack", p, [p]),
        ("tj_tensor_version", ctypes.c_uint32, [p]),
        ("tj_tensor_retain", p, [p]),
        ("tj_set_num_threads", None, [i]),
        ("tj_manual_seed", None, [ctypes.c_uint64]),
        ("tj_get_num_threads", i, []),
    ]:
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    held.tj_tensor_release.restype, held.tj_tensor_release.argtypes = None, [p]
    libc = ctypes.CDLL(None)
    libc.free.restype, libc.free.argtypes = None, [p]
    return lib, held.tj_tensor_release, libc.free


_lib, _release, _free = _load()
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.restype, _capsule_rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]


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
    return type(x).__module__.startswith("torch")


_dtype_names = {}  # numpy.dtype('float32') or torch.float32 -> "float32": str() of a NumPy dtype takes microseconds


def _dtype_name(dtype):
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = str(dtype).replace("torch.", "")
    return name


def _copy_reason(x, torch_tensor):
    """Why DLPack cannot share x's memory with tjit, or None."""
    if torch_tensor:
        return "a negated view (as z.conj().imag)" if x.is_neg() else None  # torch's export drops the bit
    if not x.flags.writeable:
        return "read-only"
    if not x.flags.aligned:
        return "not aligned to its elements"
    return "a view with negative strides" if any(s < 0 and n > 1 for s, n in zip(x.strides, x.shape)) else None


def _count_write(x):
    """Counts tjit's write into torch tensor x in its version counter, as
    an in-place operator would (DLPack writes are unseen by torch): autograd
    then refuses a saved value that tjit overwrote instead of using it."""
    import torch
    with torch.no_grad():
        x.as_strided((0,), (1,)).zero_()  # in place on an empty view of x: no element written


def _dlpack_tensor(x, what, copy_allowed, output=False):
    """A new tjit tensor over x's memory (x: a NumPy array or a torch
    tensor; what: "input 2", for messages), and None, or when tjit cannot
    share x's memory (_copy_reason) and copy_allowed, a tensor over a copy
    and the reason. An output (out=) that requires grad is refused while
    grad mode is on. The caller releases the tensor."""
    if not hasattr(x, "__dlpack__"):
        if type(x).__module__ != "numpy":
            raise TjitError("plan: %s is %s, not a NumPy array or a torch tensor" % (what, type(x).__name__))
        import numpy
        x = numpy.asarray(x)  # a NumPy scalar
    if not hasattr(x, "dtype"):
        raise TjitError("plan: %s is %s, not a NumPy array or a torch tensor" % (what, type(x).__name__))
    dtype = _dtype_name(x.dtype)
    if dtype not in DTYPES:
        raise TjitError("plan: %s is %s; tjit has %s" % (what, dtype, ", ".join(DTYPES)))
    torch_tensor = _is_torch(x)
    copied = _copy_reason(x, torch_tensor)
    if copied and not copy_allowed:
        raise TjitError("plan: %s is %s, and tjit writes it (an output, or an input the graph updates in place)"
                        % (what, copied))
    if torch_tensor:
        import torch
        if output and x.requires_grad and torch.is_grad_enabled():
            raise TjitError("plan: %s requires grad: tjit writes it as an out= argument, which autograd cannot "
                            "follow (as torch's out= functions refuse)" % what)
        x = x.detach()  # torch refuses to export a tensor that requires grad
        x = x.resolve_neg() if copied else x
        x = x.view(torch.uint8) if dtype == "bool" else x  # exported as uint8, relabelled below
    else:
        x = x.copy() if copied else x
        x = x.view("uint8") if dtype == "bool" else x
    capsule = x.__dlpack__()
    managed = _capsule_pointer(capsule, b"dltensor")
    if dtype == "bool":
        _DLTensor.from_address(managed).dtype.code = DL_BOOL
    t = _lib.tj_tensor_from_dlpack(managed)
    if not t:
        raise TjitError("plan: %s: %s" % (what, (_lib.tj_last_error() or b"").decode()))
    _capsule_rename(capsule, b"used_dltensor")  # tjit owns it now: the capsule must not delete it
    return t, copied


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
        # a context runs one thread at a time (tj_plan_run_into refuses a
        # second): a call takes an idle one, or makes one; tj_plan_free
        # frees them all. list.pop and append hold the GIL.
        self._idle_contexts = []
        self._held = {}  # input index -> (array, its memory's place, tjit tensor): see __call__'s `held`
        self._running, self._retired = 0, []  # calls in progress; held tensors replaced meanwhile
        self._count_lock = threading.Lock()  # `+= 1` is no atomic step between threads
        self.input_types = _types(self._handle, _lib.tj_plan_num_inputs(self._handle), _lib.tj_plan_input_type)
        self.output_types = _types(self._handle, _lib.tj_plan_num_outputs(self._handle), _lib.tj_plan_output_type)
        # the inputs a run writes: never copies (the write would be lost), version-counted in torch
        self._writes = {k for k in range(len(self.input_types)) if _lib.tj_plan_writes_input(self._handle, k)}

    def __del__(self):
        for t in [t for _, _, t in getattr(self, "_held", {}).values()] + getattr(self, "_retired", []):
            _release(t)
        if getattr(self, "_handle", None):
            _lib.tj_plan_free(self._handle)

    def _wrap_held(self, k, x, what):
        """The tjit tensor over input k's memory that the plan keeps while x
        (the same object, its memory in the same place) comes back: wrapped
        once, not at every call; and whether this call owns it (a copy)."""
        place = (x.data_ptr(), x.shape, x.stride()) if _is_torch(x) else (x.__array_interface__["data"], x.shape, x.strides)
        entry = self._held.get(k)
        if entry is None or entry[0] is not x or entry[1] != place:
            t, copied = _dlpack_tensor(x, what, k not in self._writes)
            if copied:  # over a copy: of this call only
                return t, True
            self._held[k] = (x, place, t)
            if entry is not None:  # released when no call may be running on it
                self._retired.append(entry[2])
            entry = self._held[k]
        return entry[2], False

    def __call__(self, *inputs, out=None, held=0):
        """Runs the plan on `inputs` (NumPy arrays or torch tensors of the
        compiled dtypes and shapes, any strides; inputs the graph updates
        in place are updated in the caller's memory) and returns the outputs:
        `out` (a list of arrays or tensors of the output types) when given,
        else new ones of the inputs' kind (torch when any input is a torch
        tensor; a plan without inputs gives NumPy arrays). Arrays may share
        memory (an `out` that is an input). What DLPack cannot share (a
        read-only NumPy array, one with a negative stride, a torch tensor
        with its negative bit set) is copied when it is an input only read,
        refused as an output or an input the graph writes. As torch's own
        in-place and out= operators, tjit's writes into torch tensors count
        in their version counters, and an `out` tensor that requires grad is
        refused while grad mode is on. Threads may call one plan at once:
        each call runs on a context of its own. The last `held` inputs
        (parameters a compiled function passes at every call) are wrapped
        once and kept while the same objects come back with their memory
        in the same place, saving their wrapping at each call."""
        if len(inputs) != len(self.input_types):
            raise TjitError("plan: %d inputs given, the graph takes %d" % (len(inputs), len(self.input_types)))
        written = list(out or [])  # the caller's tensors tjit writes (new outputs have no history to guard)
        if out is None:
            out = [_empty(dtype, shape, inputs) for dtype, shape in self.output_types]
        elif len(out) != len(self.output_types):
            raise TjitError("plan: %d outputs given, the graph returns %d" % (len(out), len(self.output_types)))
        n, made, owned, context = len(inputs), [], [], None
        with self._count_lock:
            self._running += 1
        try:
            wrapped = {}  # one tjit tensor for an array passed more than once: the plan sees it is one
            for k, x in enumerate(list(inputs) + list(out)):
                if id(x) not in wrapped:
                    what = "input %d" % k if k < n else "output %d" % (k - n)
                    if n - held <= k < n:
                        t, own = self._wrap_held(k, x, what)
                    else:
                        t, own = _dlpack_tensor(x, what, k < n and k not in self._writes, k >= n)[0], True
                    wrapped[id(x)] = t
                    if own:
                        owned.append(t)
                made.append(wrapped[id(x)])
            ins, outs = (ctypes.c_void_p * max(n, 1))(*made[:n]), (ctypes.c_void_p * max(len(out), 1))(*made[n:])
            context = self._idle_contexts.pop() if self._idle_contexts else _lib.tj_plan_context_new(self._handle)
            if not context:
                _fail("tj_plan_context_new")
            if _lib.tj_plan_run_ctx_into(context, ins, n, outs) != 0:
                _fail("tj_plan_run_into")
            written += [inputs[k] for k in self._writes]
            for x in written:
                if _is_torch(x):
                    _count_write(x)
        finally:
            if context:
                self._idle_contexts.append(context)
            for t in owned:
                _release(t)
            with self._count_lock:
                self._running -= 1
                retired = self._retired if not self._running else []
                self._retired = [] if not self._running else self._retired
            for t in retired:
                _release(t)
        return list(out)


def _empty(dtype, shape, like):
    if any(_is_torch(x) for x in like):
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype))
    import numpy
    return numpy.empty(shape, dtype=dtype)
