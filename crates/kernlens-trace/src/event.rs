//! One trace event, parsed in place: the few fields analysis uses, borrowed from the input.

use std::borrow::Cow;

use crate::json::{Cursor, JsonError, JsonRead, RawStr, Scalar, Value, parse_int, value};
use crate::member::Member;
use crate::number::micros_text_to_ns;

/// The event categories the reader routes on (trace.md "Event classification (one pass)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cat {
    Runtime,
    Driver,
    CpuOp,
    UserAnnotation,
    GpuUserAnnotation,
    Kernel,
    Memcpy,
    Memset,
    PythonFunction,
    /// `ac2g` flow events (`id` = correlation); only split keeps them.
    Flow,
    Other,
}

impl Cat {
    pub(crate) fn from_raw(raw: Option<RawStr<'_>>) -> Cat {
        let Some(raw) = raw else { return Cat::Other };
        let bytes: Cow<'_, [u8]> = if raw.escaped {
            Cow::Owned(raw.decode().into_owned().into_bytes())
        } else {
            Cow::Borrowed(raw.raw)
        };
        match &*bytes {
            b"kernel" => Cat::Kernel,
            b"gpu_memcpy" => Cat::Memcpy,
            b"gpu_memset" => Cat::Memset,
            b"cuda_runtime" => Cat::Runtime,
            b"cuda_driver" => Cat::Driver,
            b"cpu_op" => Cat::CpuOp,
            b"user_annotation" => Cat::UserAnnotation,
            b"gpu_user_annotation" => Cat::GpuUserAnnotation,
            b"python_function" => Cat::PythonFunction,
            b"ac2g" => Cat::Flow,
            _ => Cat::Other,
        }
    }

    /// Kernel, memcpy or memset: activity on the device.
    pub(crate) fn is_gpu(self) -> bool {
        matches!(self, Cat::Kernel | Cat::Memcpy | Cat::Memset)
    }
}

/// A `pid`/`tid` as it appeared: integer, string, or anything else (null).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum IdVal<'a> {
    Int(i64),
    Str(Cow<'a, str>),
    Null,
}

impl<'a> IdVal<'a> {
    pub(crate) fn into_owned(self) -> IdVal<'static> {
        match self {
            IdVal::Int(i) => IdVal::Int(i),
            IdVal::Str(s) => IdVal::Str(Cow::Owned(s.into_owned())),
            IdVal::Null => IdVal::Null,
        }
    }
}

/// A `pid`/`tid` as read, its string not yet decoded (decoding waits for the fold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IdRaw<'a> {
    Int(i64),
    Str(RawStr<'a>),
    Null,
}

impl<'a> IdRaw<'a> {
    fn from_value(v: Option<Value<'a>>) -> IdRaw<'a> {
        match v {
            Some(Value::Scalar(Scalar::Str(s))) => IdRaw::Str(s),
            Some(v) => v.as_int().map_or(IdRaw::Null, IdRaw::Int),
            None => IdRaw::Null,
        }
    }

    pub(crate) fn as_int(&self) -> Option<i64> {
        match self {
            IdRaw::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub(crate) fn decode(&self) -> IdVal<'a> {
        match self {
            IdRaw::Int(i) => IdVal::Int(*i),
            IdRaw::Str(s) => IdVal::Str(s.decode()),
            IdRaw::Null => IdVal::Null,
        }
    }
}

/// Launch geometry: a 3-integer list.
pub(crate) type Dim3 = [i64; 3];

/// The `args` members analysis reads.
#[derive(Debug, Default)]
pub(crate) struct Args<'a> {
    pub(crate) correlation: Option<i64>,
    pub(crate) external_id: Option<i64>,
    pub(crate) device: Option<i64>,
    pub(crate) grid: Option<Dim3>,
    pub(crate) block: Option<Dim3>,
    /// Raw JSON of `Input Dims` and `Input type`, normalised only when first needed.
    pub(crate) input_dims: Option<&'a [u8]>,
    pub(crate) input_type: Option<&'a [u8]>,
    pub(crate) kernel_file: Option<RawStr<'a>>,
    pub(crate) kernel_backend: Option<RawStr<'a>>,
}

/// An event of a category analysis (or the observer) uses.
#[derive(Debug)]
pub(crate) struct Event<'a> {
    pub(crate) cat: Cat,
    pub(crate) ph_x: bool,
    /// `ph` is `M` (metadata).
    pub(crate) ph_m: bool,
    /// The top-level `id` when it is an integer (flow events).
    pub(crate) id: Option<i64>,
    pub(crate) name: RawStr<'a>,
    pub(crate) pid: IdRaw<'a>,
    pub(crate) tid: IdRaw<'a>,
    pub(crate) ts: i64,
    pub(crate) dur: i64,
    pub(crate) args: Args<'a>,
}

/// Which events the caller wants back; all others are validated and dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) python_functions: bool,
    /// Every event, whatever its category (split needs flows and metadata too).
    pub(crate) everything: bool,
}

#[cfg(any(test, feature = "fuzzing"))]
impl Wanted {
    /// Every event back, whatever its category.
    pub(crate) const EVERYTHING: Wanted = Wanted {
        python_functions: true,
        everything: true,
    };
    /// What analysis without an observer asks for.
    #[cfg(test)]
    pub(crate) const ANALYSIS: Wanted = Wanted {
        python_functions: false,
        everything: false,
    };
}

/// Parses one event object (the cursor on its `{`), validating all of it.
///
/// Returns `Ok(None)` for a valid event that analysis does not use.
#[inline(always)]
pub(crate) fn parse_event<'a, R: JsonRead<'a>>(
    c: &mut R,
    stack: &mut Vec<u8>,
    wanted: Wanted,
) -> Result<Option<Event<'a>>, JsonError> {
    let mut top = Top::default();
    let mut cat: Option<Cat> = None;
    let mut args: Option<Args<'a>> = None;
    let mut late_args: Option<&'a [u8]> = None;
    if c.open(b'{', b'}')? {
        loop {
            let key = c.key()?;
            let slot = if key.escaped {
                None
            } else {
                match Member::from_key(key.raw) {
                    Some(Member::Ph) => Some(&mut top.ph),
                    Some(Member::Cat) => Some(&mut top.cat_raw),
                    Some(Member::Name) => Some(&mut top.name),
                    Some(Member::Pid) => Some(&mut top.pid),
                    Some(Member::Tid) => Some(&mut top.tid),
                    Some(Member::Ts) => Some(&mut top.ts),
                    Some(Member::Dur) => Some(&mut top.dur),
                    Some(Member::Id) => Some(&mut top.id),
                    Some(Member::Args) => {
                        // Kineto writes `cat` before `args`: then args are read once, in
                        // place; otherwise their text is kept and read after the object.
                        if cat.is_none() && top.cat_raw.is_some() {
                            cat = Some(Cat::from_raw(as_str(top.cat_raw)));
                        }
                        match cat {
                            Some(k)
                                if c.peek() == Some(b'{')
                                    && !matches!(k, Cat::Other | Cat::Flow) =>
                            {
                                args = Some(read_args(c, k, stack)?);
                                late_args = None;
                            }
                            Some(_) => {
                                args = None;
                                late_args = None;
                                value(c, stack)?;
                            }
                            None => {
                                args = None;
                                late_args = match value(c, stack)? {
                                    Value::Container(t) if t.first() == Some(&b'{') => Some(t),
                                    _ => None,
                                };
                            }
                        }
                        None
                    }
                    _ => None,
                }
            };
            match slot {
                // Duplicate members: the last one wins, as in Python's json.
                Some(slot) => {
                    *slot = Some(value(c, stack)?);
                    if key.raw == b"cat" {
                        cat = None;
                    }
                }
                None if key.raw == b"args" && !key.escaped => {}
                None => {
                    value(c, stack)?;
                }
            }
            if !c.next_or_close(b'}')? {
                break;
            }
        }
    }
    let cat = cat.unwrap_or_else(|| Cat::from_raw(as_str(top.cat_raw)));
    if !keeps(cat, &top, wanted) {
        return Ok(None);
    }
    let args = match (args, late_args) {
        (Some(a), _) => a,
        (None, Some(text)) if !matches!(cat, Cat::Other | Cat::Flow) => {
            read_args(&mut Cursor::new(text, 0), cat, stack)?
        }
        (None, _) => Args::default(),
    };
    Ok(Some(assemble(&top, cat, args)))
}

/// The top-level members analysis reads, as they were found (the last of duplicates).
#[derive(Default)]
pub(crate) struct Top<'a> {
    pub(crate) ph: Option<Value<'a>>,
    pub(crate) cat_raw: Option<Value<'a>>,
    pub(crate) name: Option<Value<'a>>,
    pub(crate) pid: Option<Value<'a>>,
    pub(crate) tid: Option<Value<'a>>,
    pub(crate) ts: Option<Value<'a>>,
    pub(crate) dur: Option<Value<'a>>,
    pub(crate) id: Option<Value<'a>>,
}

/// Whether the caller gets an event of category `cat` back.
#[inline(always)]
pub(crate) fn keeps(cat: Cat, top: &Top<'_>, wanted: Wanted) -> bool {
    keeps_cat(cat, as_str(top.ph).is_some_and(|p| p.eq_str("X")), wanted)
}

/// [`keeps`] for an event of category `cat` whose `ph` is `X` or not (`ph_x`).
#[inline(always)]
pub(crate) fn keeps_cat(cat: Cat, ph_x: bool, wanted: Wanted) -> bool {
    wanted.everything
        || match cat {
            Cat::Other | Cat::Flow => false,
            Cat::PythonFunction => wanted.python_functions,
            c if c.is_gpu() || c == Cat::GpuUserAnnotation || c == Cat::UserAnnotation => ph_x,
            _ => true,
        }
}

/// The event from its members.
#[inline(always)]
pub(crate) fn assemble<'a>(top: &Top<'a>, cat: Cat, args: Args<'a>) -> Event<'a> {
    let time = |v: Option<Value<'a>>| match v {
        Some(Value::Scalar(Scalar::Num(t))) => micros_text_to_ns(t).unwrap_or(0),
        _ => 0,
    };
    Event {
        cat,
        ph_x: as_str(top.ph).is_some_and(|p| p.eq_str("X")),
        ph_m: as_str(top.ph).is_some_and(|p| p.eq_str("M")),
        id: top.id.and_then(|v| v.as_int()),
        name: as_str(top.name).unwrap_or(RawStr {
            raw: b"",
            escaped: false,
        }),
        pid: IdRaw::from_value(top.pid),
        tid: IdRaw::from_value(top.tid),
        ts: time(top.ts),
        dur: time(top.dur).max(0),
        args,
    }
}

fn as_str(v: Option<Value<'_>>) -> Option<RawStr<'_>> {
    match v {
        Some(Value::Scalar(Scalar::Str(s))) => Some(s),
        _ => None,
    }
}

/// Reads an `args` object (the cursor on its `{`), validating all of it and keeping
/// the members the category needs.
#[inline(always)]
fn read_args<'a, R: JsonRead<'a>>(
    c: &mut R,
    cat: Cat,
    stack: &mut Vec<u8>,
) -> Result<Args<'a>, JsonError> {
    let mut a = Args::default();
    if !c.open(b'{', b'}')? {
        return Ok(a);
    }
    loop {
        let key = c.key()?;
        let key_text: Cow<'_, [u8]> = if key.escaped {
            Cow::Owned(key.decode().into_owned().into_bytes())
        } else {
            Cow::Borrowed(key.raw)
        };
        let v = value(c, stack)?;
        match Member::from_arg_key(&key_text).filter(|m| m.kept_for(cat)) {
            Some(Member::Correlation) => a.correlation = v.as_int(),
            Some(Member::ExternalId) => a.external_id = v.as_int(),
            Some(Member::Device) => a.device = v.as_int(),
            Some(Member::Grid) => a.grid = dim3(v),
            Some(Member::Block) => a.block = dim3(v),
            Some(Member::InputDims) => a.input_dims = container(v, b'['),
            Some(Member::InputType) => a.input_type = container(v, b'['),
            Some(Member::KernelFile) => a.kernel_file = string(v),
            Some(Member::KernelBackend) => a.kernel_backend = string(v),
            _ => {}
        }
        if !c.next_or_close(b'}')? {
            return Ok(a);
        }
    }
}

fn container(v: Value<'_>, open: u8) -> Option<&[u8]> {
    match v {
        Value::Container(t) if t.first() == Some(&open) => Some(t),
        _ => None,
    }
}

fn string(v: Value<'_>) -> Option<RawStr<'_>> {
    match v {
        Value::Scalar(Scalar::Str(s)) => Some(s),
        _ => None,
    }
}

/// A `[x, y, z]` integer list (already validated); anything else is None.
fn dim3(v: Value<'_>) -> Option<Dim3> {
    let text = container(v, b'[')?;
    // The text is valid JSON, so splitting at commas is safe: any element that is not a
    // plain integer (a string, a nested list) fails `parse_int` on its own part.
    let inner = text.strip_prefix(b"[")?.strip_suffix(b"]")?;
    let mut out = [0i64; 3];
    let mut parts = inner.split(|&c| c == b',');
    for slot in out.iter_mut() {
        *slot = parse_int(parts.next()?.trim_ascii())?;
    }
    match parts.next() {
        None => Some(out),
        Some(_) => None,
    }
}

/// Maps each element of a validated JSON array; anything else gives an empty list.
fn map_array<T>(text: &[u8], mut f: impl FnMut(Value<'_>) -> T) -> Vec<T> {
    let mut c = Cursor::new(text, 0);
    let mut stack = Vec::new();
    let mut out = Vec::new();
    if !matches!(c.open(b'[', b']'), Ok(true)) {
        return out;
    }
    while let Ok(v) = c.value(&mut stack) {
        out.push(f(v));
        if !matches!(c.next_or_close(b']'), Ok(true)) {
            break;
        }
    }
    out
}

/// `Input Dims` normalised positionally: a list entry keeps its integer members, any
/// other entry becomes `[]` (trace.md "Rows").
pub(crate) fn normalize_shapes(text: &[u8]) -> Vec<Vec<i64>> {
    map_array(text, |v| match v {
        Value::Container(t) if t.first() == Some(&b'[') => {
            map_array(t, |x| x.as_int()).into_iter().flatten().collect()
        }
        _ => Vec::new(),
    })
}

/// `Input type` normalised: strings kept, any other entry becomes `""`.
pub(crate) fn normalize_dtypes(text: &[u8]) -> Vec<String> {
    map_array(text, |v| match v {
        Value::Scalar(Scalar::Str(s)) => s.decode().into_owned(),
        _ => String::new(),
    })
}
