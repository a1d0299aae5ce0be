"""Enums of the C API and the communicator options (xc_config_t)."""

import enum
from dataclasses import dataclass
from typing import Optional, Union

from ._cdef import DEFINES
from ._ffi import ffi, lib
from .errors import check


class Result(enum.IntEnum):
    SUCCESS = lib.XC_SUCCESS
    IN_PROGRESS = lib.XC_IN_PROGRESS
    ERR_INVALID_ARGUMENT = lib.XC_ERR_INVALID_ARGUMENT
    ERR_INVALID_USAGE = lib.XC_ERR_INVALID_USAGE
    ERR_NO_MEMORY = lib.XC_ERR_NO_MEMORY
    ERR_SYSTEM = lib.XC_ERR_SYSTEM
    ERR_TIMEOUT = lib.XC_ERR_TIMEOUT
    ERR_PEER_FAILED = lib.XC_ERR_PEER_FAILED
    ERR_ABORTED = lib.XC_ERR_ABORTED
    ERR_UNSUPPORTED = lib.XC_ERR_UNSUPPORTED
    ERR_TRUNCATED = lib.XC_ERR_TRUNCATED
    ERR_CUDA = lib.XC_ERR_CUDA
    ERR_NCCL = lib.XC_ERR_NCCL
    ERR_INTERNAL = lib.XC_ERR_INTERNAL
    ERR_REVOKED = lib.XC_ERR_REVOKED


class DType(enum.IntEnum):
    INT8 = lib.XC_INT8
    UINT8 = lib.XC_UINT8
    INT32 = lib.XC_INT32
    UINT32 = lib.XC_UINT32
    INT64 = lib.XC_INT64
    UINT64 = lib.XC_UINT64
    FLOAT16 = lib.XC_FLOAT16
    BFLOAT16 = lib.XC_BFLOAT16
    FLOAT32 = lib.XC_FLOAT32
    FLOAT64 = lib.XC_FLOAT64


class Op(enum.IntEnum):
    SUM = lib.XC_SUM
    PROD = lib.XC_PROD
    MIN = lib.XC_MIN
    MAX = lib.XC_MAX
    AVG = lib.XC_AVG
    BAND = lib.XC_BAND
    BOR = lib.XC_BOR
    BXOR = lib.XC_BXOR


class ThreadMode(enum.IntEnum):
    DEFAULT = lib.XC_THREAD_DEFAULT
    SERIALIZED = lib.XC_THREAD_SERIALIZED
    MULTIPLE = lib.XC_THREAD_MULTIPLE


class DebugLevel(enum.IntEnum):
    DEFAULT = lib.XC_DEBUG_DEFAULT
    NONE = lib.XC_DEBUG_NONE
    WARN = lib.XC_DEBUG_WARN
    INFO = lib.XC_DEBUG_INFO
    TRACE = lib.XC_DEBUG_TRACE


DEVICE_AUTO = DEFINES["XC_DEVICE_AUTO"]
DEVICE_NONE = DEFINES["XC_DEVICE_NONE"]


def to_enum(cls, value, what):
    """cls member for a member, its int value, or its name in any case ("sum")."""
    if isinstance(value, str):
        try:
            return cls[value.upper()]
        except KeyError:
            pass
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            return cls(value)
        except ValueError:
            pass
    names = ", ".join(repr(m.name.lower()) for m in cls)
    raise ValueError("%s must be one of %s (or xcomm.%s), not %r" % (what, names, cls.__name__, value))


@dataclass(frozen=True)
class Config:
    """Options of a communicator, mapped onto xc_config_t (which starts from
    xc_config_init()). None leaves the library's default: timeout_ms from
    XC_TIMEOUT or 300000, device XC_DEVICE_AUTO, debug level from XC_DEBUG.
    thread_mode and debug_level take the enum, its int or its name ("warn")."""

    timeout_ms: Optional[int] = None
    name: Optional[str] = None
    thread_mode: Union[ThreadMode, int, str, None] = None
    debug_level: Union[DebugLevel, int, str, None] = None
    device: Optional[int] = None
    nccl_lazy: Optional[bool] = None

    def to_c(self):
        """(xc_config_t *, keepalive): keep the second alive while the first is used."""
        cfg = ffi.new("xc_config_t *")
        check(lib.xc_config_init(cfg, ffi.sizeof("xc_config_t")))
        keep = None
        if self.timeout_ms is not None:
            if int(self.timeout_ms) < 0:
                raise ValueError("timeout_ms must be >= 0, not %r" % (self.timeout_ms,))
            cfg.timeout_ms = int(self.timeout_ms)
        if self.name is not None:
            keep = ffi.new("char[]", str(self.name).encode("utf-8"))
            cfg.name = keep
        if self.thread_mode is not None:
            cfg.thread_mode = to_enum(ThreadMode, self.thread_mode, "thread_mode")
        if self.debug_level is not None:
            cfg.debug_level = to_enum(DebugLevel, self.debug_level, "debug_level")
        if self.device is not None:
            cfg.device = int(self.device)
        if self.nccl_lazy is not None:
            cfg.nccl_lazy = 1 if self.nccl_lazy else 0
        return cfg, keep


def make_config(config=None, **kwargs):
    """The xc_config_t for config= and/or keyword options, or (NULL, None)
    when neither is given (the library's defaults, or the parent's)."""
    if config is not None and not isinstance(config, Config):
        raise TypeError("config must be an xcomm.Config, not %s" % type(config).__name__)
    unknown = set(kwargs) - set(Config.__dataclass_fields__)
    if unknown:
        raise TypeError("unknown option(s): %s" % ", ".join(sorted(unknown)))
    given = {k: v for k, v in kwargs.items() if v is not None}
    if config is None and not given:
        return ffi.NULL, None
    base = config or Config()
    if given:
        base = Config(**{**base.__dict__, **given})
    return base.to_c()
