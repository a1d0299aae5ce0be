use std::ffi::CString;
use std::mem::size_of;

use xcomm_sys as sys;

use crate::error::{Error, Result};

/// How threads may enter xcomm (`xc_thread_mode_t`). The mode belongs to the
/// job's transport state: communicators split from one inherit it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ThreadMode {
    /// = `Multiple`.
    #[default]
    Default,
    /// The library takes no locks; the wrapper then serialises every call on
    /// such a communicator (and its requests) with one process-wide lock, so
    /// `Comm: Sync` stays sound. A thread blocked in a call holds the lock.
    Serialized,
    /// Any thread, any time.
    Multiple,
}

/// Logging of the library (`xc_debug_level_t`; process-wide).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DebugLevel {
    /// Take `XC_DEBUG` from the environment.
    #[default]
    Default,
    None,
    Warn,
    Info,
    Trace,
}

/// Which GPU a communicator uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Device {
    /// Local rank modulo the number of devices.
    #[default]
    Auto,
    /// Host memory only.
    None,
    /// This device index.
    Index(i32),
}

/// Options of a communicator, built from the library's defaults
/// (`xc_config_init`); every option left alone keeps its default.
///
/// ```no_run
/// let cfg = xcomm::Config::new().timeout_ms(10_000).name("trainer");
/// let world = xcomm::init_with(&cfg)?;
/// # Ok::<(), xcomm::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    raw: sys::xc_config_t,
    name: Option<CString>,
    bad_name: Option<String>,
}

// SAFETY: the only pointer in `raw` is `name`, which stays NULL in the stored
// copy (`raw()` fills it in a fresh copy, pointing into `self.name`).
unsafe impl Send for Config {}
unsafe impl Sync for Config {}

impl Default for Config {
    fn default() -> Self {
        Config::new()
    }
}

impl Config {
    /// The library's defaults.
    pub fn new() -> Config {
        // SAFETY: xc_config_t is plain data; xc_config_init fills all of it.
        let mut raw: sys::xc_config_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { sys::xc_config_init(&mut raw, size_of::<sys::xc_config_t>()) };
        assert_eq!(
            rc,
            sys::XC_SUCCESS,
            "xc_config_init rejected this binding's xc_config_t: {}",
            Error::last(rc)
        );
        Config {
            raw,
            name: None,
            bad_name: None,
        }
    }

    /// Deadline of every blocking wait, in milliseconds (0: `XC_TIMEOUT` from
    /// the environment, or 300000).
    pub fn timeout_ms(mut self, ms: u64) -> Config {
        self.raw.timeout_ms = ms;
        self
    }

    /// Shown in logs and error messages. A name with a NUL byte makes the
    /// call that uses this Config fail with `XC_ERR_INVALID_ARGUMENT`.
    pub fn name(mut self, name: &str) -> Config {
        match CString::new(name) {
            Ok(c) => {
                self.name = Some(c);
                self.bad_name = None;
            }
            Err(_) => self.bad_name = Some(name.to_string()),
        }
        self
    }

    pub fn thread_mode(mut self, mode: ThreadMode) -> Config {
        self.raw.thread_mode = match mode {
            ThreadMode::Default => sys::XC_THREAD_DEFAULT,
            ThreadMode::Serialized => sys::XC_THREAD_SERIALIZED,
            ThreadMode::Multiple => sys::XC_THREAD_MULTIPLE,
        };
        self
    }

    pub fn debug_level(mut self, level: DebugLevel) -> Config {
        self.raw.debug_level = match level {
            DebugLevel::Default => sys::XC_DEBUG_DEFAULT,
            DebugLevel::None => sys::XC_DEBUG_NONE,
            DebugLevel::Warn => sys::XC_DEBUG_WARN,
            DebugLevel::Info => sys::XC_DEBUG_INFO,
            DebugLevel::Trace => sys::XC_DEBUG_TRACE,
        };
        self
    }

    pub fn device(mut self, device: Device) -> Config {
        self.raw.device = match device {
            Device::Auto => sys::XC_DEVICE_AUTO,
            Device::None => sys::XC_DEVICE_NONE,
            Device::Index(i) => i,
        };
        self
    }

    /// Make the NCCL communicator at the first device op instead of at
    /// creation (`xc_config_t.nccl_lazy`; docs/nccl.md).
    pub fn nccl_lazy(mut self, lazy: bool) -> Config {
        self.raw.nccl_lazy = i32::from(lazy);
        self
    }

    pub(crate) fn serialized(&self) -> bool {
        self.raw.thread_mode == sys::XC_THREAD_SERIALIZED
    }

    /// The C struct, with `name` pointing into this Config (valid while it
    /// lives).
    pub(crate) fn raw(&self) -> Result<sys::xc_config_t> {
        if let Some(bad) = &self.bad_name {
            return Err(Error::invalid_argument(format!(
                "config name {bad:?} contains a NUL byte"
            )));
        }
        let mut raw = self.raw;
        raw.name = self.name.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        Ok(raw)
    }
}
