//! Checks this crate against include/xcomm.h: every function (name, parameter
//! and return types), every enumerator and integer #define (name and value),
//! and the layout of every struct. The header is parsed here with a small
//! tokenizer: it is plain C99 without nested declarators.
use std::collections::BTreeMap;
use std::mem::{align_of, offset_of, size_of};
use std::path::PathBuf;

use xcomm_sys::*;

fn header_text() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../include/xcomm.h");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The header without comments. Line breaks are kept (preprocessor lines end
/// at them); a comment becomes one space.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").expect("unterminated comment");
            out.push(' ');
            out.extend(after[..end].chars().filter(|&c| c == '\n'));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = &after[after.find('\n').unwrap_or(after.len())..];
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// (preprocessor lines, C code), comments removed; continuation lines joined.
fn split_preprocessor(src: &str) -> (Vec<String>, String) {
    let joined = strip_comments(src).replace("\\\n", " ");
    let (mut pp, mut code) = (Vec::new(), String::new());
    for line in joined.lines() {
        if line.trim_start().starts_with('#') {
            pp.push(line.trim().to_string());
        } else {
            code.push_str(line);
            code.push('\n');
        }
    }
    (pp, code)
}

fn tokens(code: &str) -> Vec<String> {
    let mut toks = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut t = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || c == '_' {
                    t.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            toks.push(t);
        } else {
            toks.push(c.to_string());
            chars.next();
        }
    }
    toks
}

fn parse_int(text: &str) -> i64 {
    let t = text
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest.trim()),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16),
        None => t.parse::<i64>(),
    }
    .unwrap_or_else(|e| panic!("not an integer: {text:?} ({e})"));
    if neg {
        -v
    } else {
        v
    }
}

struct Header {
    /// name -> (return type, parameter types), types in C spelling.
    functions: BTreeMap<String, (String, Vec<String>)>,
    /// name -> (group, value): enumerators (group = enum tag) and integer defines.
    constants: BTreeMap<String, (String, i64)>,
    /// struct typedef name -> fields (C type, name, array length).
    structs: BTreeMap<String, Vec<(String, String, usize)>>,
}

/// Join type tokens: "const char *" style, one space between words.
fn c_type(toks: &[String]) -> String {
    let mut s = String::new();
    for t in toks {
        let glued = s.is_empty() || (t == "*" && s.ends_with('*'));
        if !glued {
            s.push(' ');
        }
        s.push_str(t);
    }
    s
}

fn parse_header() -> Header {
    let (pp, code) = split_preprocessor(&header_text());
    let mut h = Header {
        functions: BTreeMap::new(),
        constants: BTreeMap::new(),
        structs: BTreeMap::new(),
    };

    // #define NAME <integer> (in parentheses or not). Macros that are not
    // integers (the include guard, XC_IN_PLACE, XC_CONFIG_INIT) are skipped.
    for line in &pp {
        let mut words = line
            .trim_start_matches('#')
            .trim()
            .splitn(3, char::is_whitespace);
        if words.next() != Some("define") {
            continue;
        }
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let v = value.trim().trim_start_matches('(').trim_end_matches(')');
        let v = v.trim().trim_start_matches('-').trim();
        let is_int = !v.is_empty()
            && (v.chars().all(|c| c.is_ascii_digit())
                || (v.starts_with("0x")
                    && v.len() > 2
                    && v[2..].chars().all(|c| c.is_ascii_hexdigit())));
        if name.starts_with("XC_") && is_int {
            h.constants
                .insert(name.to_string(), ("define".to_string(), parse_int(value)));
        }
    }

    let toks = tokens(&code);
    let mut i = 0;
    while i < toks.len() {
        // typedef enum TAG { A = v, ... } TAG_t;
        if toks[i] == "typedef" && toks.get(i + 1).map(String::as_str) == Some("enum") {
            let tag = toks[i + 2].clone();
            assert_eq!(toks[i + 3], "{", "enum {tag} without a body");
            let mut j = i + 4;
            while toks[j] != "}" {
                let name = toks[j].clone();
                assert_eq!(
                    toks[j + 1],
                    "=",
                    "{name}: every enumerator's value must be written out"
                );
                let mut k = j + 2;
                let mut value = String::new();
                while toks[k] != "," && toks[k] != "}" {
                    value.push_str(&toks[k]);
                    k += 1;
                }
                let prev = h
                    .constants
                    .insert(name.clone(), (tag.clone(), parse_int(&value)));
                assert!(prev.is_none(), "{name} is defined twice");
                j = if toks[k] == "," { k + 1 } else { k };
            }
            i = j + 1;
            continue;
        }
        // typedef struct TAG { TYPE NAME [N]; ... } NAME_t;
        if toks[i] == "typedef"
            && toks.get(i + 1).map(String::as_str) == Some("struct")
            && toks.get(i + 3).map(String::as_str) == Some("{")
        {
            let mut j = i + 4;
            let mut fields = Vec::new();
            while toks[j] != "}" {
                let start = j;
                while toks[j] != ";" {
                    j += 1;
                }
                let decl = &toks[start..j];
                let (ty, name, len) = if decl.last().map(String::as_str) == Some("]") {
                    let n = decl.len();
                    (
                        c_type(&decl[..n - 4]),
                        decl[n - 4].clone(),
                        parse_int(&decl[n - 2]) as usize,
                    )
                } else {
                    (
                        c_type(&decl[..decl.len() - 1]),
                        decl[decl.len() - 1].clone(),
                        0,
                    )
                };
                fields.push((ty, name, len));
                j += 1;
            }
            let typedef_name = toks[j + 1].clone();
            h.structs.insert(typedef_name, fields);
            i = j + 2;
            continue;
        }
        // RET xc_name ( PARAMS ) ;   (RET is the run of tokens since the last ; or })
        if toks[i].starts_with("xc_") && toks.get(i + 1).map(String::as_str) == Some("(") {
            let mut s = i;
            while s > 0 && toks[s - 1] != ";" && toks[s - 1] != "}" && toks[s - 1] != "{" {
                s -= 1;
            }
            let ret = c_type(&toks[s..i]);
            let mut j = i + 2;
            let mut params = Vec::new();
            let mut cur: Vec<String> = Vec::new();
            while toks[j] != ")" {
                if toks[j] == "," {
                    params.push(std::mem::take(&mut cur));
                } else {
                    cur.push(toks[j].clone());
                }
                j += 1;
            }
            params.push(cur);
            assert_eq!(toks[j + 1], ";", "{}: expected a prototype", toks[i]);
            // Drop the parameter names (the last identifier after the type);
            // (void) means none.
            let params: Vec<String> = if params.len() == 1 && params[0] == ["void"] {
                Vec::new()
            } else {
                params
                    .iter()
                    .map(|p| {
                        assert!(p.len() >= 2, "{}: unnamed parameter {:?}", toks[i], p);
                        c_type(&p[..p.len() - 1])
                    })
                    .collect()
            };
            let prev = h.functions.insert(toks[i].clone(), (ret, params));
            assert!(prev.is_none(), "{} is declared twice", toks[i]);
            i = j + 2;
            continue;
        }
        i += 1;
    }
    h
}

/// A C type as this crate must spell it in Rust: `const void *` is
/// `*const c_void`, `void **` is `*mut *mut c_void`, `const char *const *`
/// is `*const *const c_char` (each `const` after a `*` makes that pointer's
/// target, one level out, const).
fn rust_type(c: &str) -> String {
    let spaced = c.replace('*', " * ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let first_star = words.iter().position(|w| *w == "*").unwrap_or(words.len());
    let (base_words, pointers) = words.split_at(first_star);
    let konst = base_words.contains(&"const");
    let base: Vec<&str> = base_words
        .iter()
        .copied()
        .filter(|w| *w != "const")
        .collect();
    assert_eq!(base.len(), 1, "unexpected C type {c:?}");
    let base = match base[0] {
        "int" => "c_int",
        "char" => "c_char",
        "void" => "c_void",
        "size_t" => "usize",
        "int32_t" => "i32",
        "uint32_t" => "u32",
        "uint64_t" => "u64",
        "int64_t" => "i64",
        other if other.starts_with("xc_") => other,
        other => panic!("no Rust spelling for C type {other:?} (in {c:?})"),
    };
    // Innermost pointer first: each wraps the type so far.
    let (mut ty, mut target_const) = (base.to_string(), konst);
    for w in pointers {
        match *w {
            "*" => {
                ty = format!("*{} {ty}", if target_const { "const" } else { "mut" });
                target_const = false;
            }
            "const" => target_const = true,
            other => panic!("unexpected {other:?} after a pointer in C type {c:?}"),
        }
    }
    // A trailing const (`void *const p`) qualifies the parameter itself,
    // which is no part of the function's type.
    ty
}

fn squash(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("* ", "*")
}

#[test]
fn every_function_is_declared_with_the_headers_types() {
    let h = parse_header();
    assert!(
        h.functions.len() >= 30,
        "parsed only {} functions; is the parser broken?",
        h.functions.len()
    );
    let ours: BTreeMap<&str, &FnDecl> = FUNCTIONS.iter().map(|f| (f.name, f)).collect();
    assert_eq!(ours.len(), FUNCTIONS.len(), "a function is declared twice");
    let mut problems = Vec::new();
    for (name, (ret, params)) in &h.functions {
        let Some(f) = ours.get(name.as_str()) else {
            problems.push(format!("{name}: in the header, not in xcomm-sys"));
            continue;
        };
        let want_ret = rust_type(ret);
        if squash(f.ret) != squash(&want_ret) {
            problems.push(format!(
                "{name}: returns {} in Rust, {ret} ({want_ret}) in C",
                f.ret
            ));
        }
        let want: Vec<String> = params.iter().map(|p| rust_type(p)).collect();
        let got: Vec<String> = f.params.iter().map(|p| squash(p)).collect();
        let want_sq: Vec<String> = want.iter().map(|p| squash(p)).collect();
        if got != want_sq {
            problems.push(format!(
                "{name}: parameters {got:?} in Rust, {params:?} = {want:?} in C"
            ));
        }
    }
    for f in FUNCTIONS {
        if !h.functions.contains_key(f.name) {
            problems.push(format!(
                "{}: declared in xcomm-sys, not in the header",
                f.name
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "xcomm-sys and xcomm.h disagree:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_constant_has_the_headers_value() {
    let h = parse_header();
    assert!(
        h.constants.len() >= 50,
        "parsed only {} constants; is the parser broken?",
        h.constants.len()
    );
    let mut problems = Vec::new();
    for (name, (group, value)) in &h.constants {
        match CONSTANTS.iter().find(|c| c.name == name) {
            None => problems.push(format!(
                "{name} ({group} = {value}): in the header, not in xcomm-sys"
            )),
            Some(c) if c.value != *value || c.group != group => problems.push(format!(
                "{name}: {} = {} in Rust, {group} = {value} in C",
                c.group, c.value
            )),
            Some(_) => {}
        }
    }
    for c in CONSTANTS {
        if !h.constants.contains_key(c.name) {
            problems.push(format!(
                "{}: declared in xcomm-sys, not in the header",
                c.name
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "xcomm-sys and xcomm.h disagree:\n  {}",
        problems.join("\n  ")
    );
}

/// size and alignment of a C field type on this target (LP64 Linux).
fn c_layout(ty: &str) -> (usize, usize) {
    let r = rust_type(ty);
    let s = match r.as_str() {
        p if p.starts_with('*') => size_of::<*const u8>(),
        "c_int" | "i32" | "u32" => 4,
        "c_char" => 1,
        "usize" => size_of::<usize>(),
        "u64" | "i64" => 8,
        other => panic!("no C layout for {other}"),
    };
    (s, s) // every scalar here is naturally aligned on the supported targets
}

/// The C layout of a struct from the header's field list: (size, align, offsets).
fn c_struct_layout(fields: &[(String, String, usize)]) -> (usize, usize, BTreeMap<String, usize>) {
    let (mut off, mut align) = (0usize, 1usize);
    let mut offsets = BTreeMap::new();
    for (ty, name, len) in fields {
        let (s, a) = c_layout(ty);
        off = off.next_multiple_of(a);
        offsets.insert(name.clone(), off);
        off += s * (*len).max(1);
        align = align.max(a);
    }
    (off.next_multiple_of(align), align, offsets)
}

macro_rules! rust_offsets {
    ($t:ty: $($f:ident),*) => {{
        let mut m = BTreeMap::new();
        $( m.insert(stringify!($f).to_string(), offset_of!($t, $f)); )*
        m
    }};
}

#[test]
fn structs_have_the_c_layout() {
    let h = parse_header();
    let cases: [(&str, usize, usize, BTreeMap<String, usize>); 6] = [
        (
            "xc_config_t",
            size_of::<xc_config_t>(),
            align_of::<xc_config_t>(),
            rust_offsets!(xc_config_t: size, version, device, timeout_ms, thread_mode, debug_level, name, nccl_lazy),
        ),
        (
            "xc_status_t",
            size_of::<xc_status_t>(),
            align_of::<xc_status_t>(),
            rust_offsets!(xc_status_t: source, tag, error, reserved, bytes),
        ),
        (
            "xc_unique_id_t",
            size_of::<xc_unique_id_t>(),
            align_of::<xc_unique_id_t>(),
            rust_offsets!(xc_unique_id_t: internal),
        ),
        (
            "xc_placement_t",
            size_of::<xc_placement_t>(),
            align_of::<xc_placement_t>(),
            rust_offsets!(xc_placement_t: kind, dim, op, reserved),
        ),
        (
            "xc_redist_config_t",
            size_of::<xc_redist_config_t>(),
            align_of::<xc_redist_config_t>(),
            rust_offsets!(xc_redist_config_t: size, version, flags),
        ),
        (
            "xc_plan_info_t",
            size_of::<xc_plan_info_t>(),
            align_of::<xc_plan_info_t>(),
            rust_offsets!(xc_plan_info_t: size, version, step_kinds, bytes_sent, bytes_received, bytes_copied,
                          lower_bound_bytes, messages_sent, messages_received, collective_steps, p2p_steps),
        ),
    ];
    assert_eq!(
        h.structs.len(),
        cases.len(),
        "structs in the header: {:?}",
        h.structs.keys()
    );
    for (name, size, align, offsets) in cases {
        let fields = h
            .structs
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in the header"));
        let (c_size, c_align, c_offsets) = c_struct_layout(fields);
        assert_eq!(size, c_size, "size_of::<{name}>()");
        assert_eq!(align, c_align, "align_of::<{name}>()");
        assert_eq!(
            offsets, c_offsets,
            "{name}: field offsets (Rust vs the header's field list)"
        );
    }
    // The sizes the ABI promises on x86_64 (and every LP64 target).
    if cfg!(target_pointer_width = "64") {
        assert_eq!(size_of::<xc_config_t>(), 48);
        assert_eq!(size_of::<xc_status_t>(), 24);
    }
    assert_eq!(size_of::<xc_unique_id_t>(), 128);
}

#[test]
fn the_library_agrees_at_run_time() {
    // Every declared symbol resolves (this binary links them all).
    for (name, addr) in function_addresses() {
        assert_ne!(addr, 0, "{name}");
    }
    let (mut major, mut minor, mut patch) = (-1, -1, -1);
    assert_eq!(
        unsafe { xc_get_version(&mut major, &mut minor, &mut patch) },
        XC_SUCCESS
    );
    assert_eq!(
        (major, minor, patch),
        (XC_VERSION_MAJOR, XC_VERSION_MINOR, XC_VERSION_PATCH)
    );
    assert_eq!(
        unsafe {
            xc_get_version(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        },
        XC_SUCCESS
    );

    for (dtype, size) in [
        (XC_INT8, 1),
        (XC_UINT8, 1),
        (XC_INT32, 4),
        (XC_UINT32, 4),
        (XC_INT64, 8),
        (XC_UINT64, 8),
        (XC_FLOAT16, 2),
        (XC_BFLOAT16, 2),
        (XC_FLOAT32, 4),
        (XC_FLOAT64, 8),
        (XC_DTYPE_FORCE_32BIT, 0),
        (-1, 0),
    ] {
        assert_eq!(
            unsafe { xc_dtype_size(dtype) },
            size,
            "xc_dtype_size({dtype})"
        );
    }

    let mut cfg: xc_config_t = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { xc_config_init(&mut cfg, size_of::<xc_config_t>()) },
        XC_SUCCESS
    );
    assert_eq!(cfg.size, size_of::<xc_config_t>());
    assert_eq!(cfg.version as c_int, XC_CONFIG_VERSION);
    assert_eq!(cfg.device, XC_DEVICE_AUTO);
    assert_eq!(
        (cfg.timeout_ms, cfg.thread_mode, cfg.debug_level),
        (0, XC_THREAD_DEFAULT, XC_DEBUG_DEFAULT)
    );
    assert!(cfg.name.is_null());

    for c in CONSTANTS.iter().filter(|c| c.group == "xc_result") {
        let s = unsafe { xc_strerror(c.value as xc_result_t) };
        assert!(!s.is_null(), "xc_strerror({})", c.name);
    }
    // A bad argument sets the thread's last error; a success clears it.
    assert_eq!(
        unsafe { xc_comm_rank(std::ptr::null_mut(), &mut major) },
        XC_ERR_INVALID_ARGUMENT
    );
    let msg = unsafe { std::ffi::CStr::from_ptr(xc_last_error()) }
        .to_string_lossy()
        .into_owned();
    assert!(msg.contains("NULL"), "last error: {msg:?}");
    assert_eq!(
        unsafe { xc_get_version(&mut major, &mut minor, &mut patch) },
        XC_SUCCESS
    );
    assert_eq!(
        unsafe { std::ffi::CStr::from_ptr(xc_last_error()) }.to_bytes(),
        b""
    );
}
