use std::ffi::CStr;
use std::fmt;

use xcomm_sys as sys;

/// An xcomm error: the C result code, its name and the detail of
/// `xc_last_error()` (which argument, which rank, which op), read on the
/// thread that made the failing call, right after it.
///
/// Errors the wrapper finds itself before calling C (a slice of the wrong
/// length, a name with a NUL byte) use the same codes as the library would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The `xc_result_t`, e.g. [`sys::XC_ERR_INVALID_ARGUMENT`].
    pub code: i32,
    /// The enumerator's name, e.g. `"XC_ERR_INVALID_ARGUMENT"`.
    pub name: &'static str,
    /// The detail; falls back to [`Error::description`] when the library
    /// gave none.
    pub message: String,
}

/// `std::result::Result` with an xcomm [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with code `code` and the calling thread's `xc_last_error()`.
    pub(crate) fn last(code: i32) -> Error {
        // SAFETY: xc_last_error never returns NULL; the string is valid until
        // the next xc_ call on this thread, and it is copied at once.
        let detail = unsafe { CStr::from_ptr(sys::xc_last_error()) }
            .to_string_lossy()
            .into_owned();
        Error::new(code, detail)
    }

    /// An error found by the wrapper itself.
    pub(crate) fn new(code: i32, message: impl Into<String>) -> Error {
        let mut message = message.into();
        if message.is_empty() {
            message = description(code).to_string();
        }
        Error {
            code,
            name: code_name(code),
            message,
        }
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(sys::XC_ERR_INVALID_ARGUMENT, message)
    }

    /// The library's static description of the code (`xc_strerror`).
    pub fn description(&self) -> &'static str {
        description(self.code)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `XC_SUCCESS`, else the error with this thread's last message.
pub(crate) fn check(code: sys::xc_result_t) -> Result<()> {
    if code == sys::XC_SUCCESS {
        Ok(())
    } else {
        Err(Error::last(code))
    }
}

/// `xc_strerror(code)`.
pub fn description(code: i32) -> &'static str {
    // SAFETY: xc_strerror never returns NULL; the string lives forever.
    let s = unsafe { CStr::from_ptr(sys::xc_strerror(code)) };
    s.to_str().unwrap_or("(description is not UTF-8)")
}

/// The name of a result code, e.g. `"XC_ERR_TIMEOUT"`.
pub fn code_name(code: i32) -> &'static str {
    sys::CONSTANTS
        .iter()
        .find(|c| {
            c.group == "xc_result" && c.value == code as i64 && !c.name.ends_with("FORCE_32BIT")
        })
        .map(|c| c.name)
        .unwrap_or("XC_ERR_UNKNOWN")
}
