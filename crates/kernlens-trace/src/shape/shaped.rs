//! An event a learned shape has just read, handed to its writer
//! ([`crate::scan::Put::put_shaped`]) as byte ranges by role: built into an [`Event`] when
//! the writer wants it, or asked for the one or two members it needs, each decoded as the
//! event would hold it.

use super::{Found, Role, Shape, Values};
use crate::event::{Args, Cat, Event, Wanted, keeps_cat};
use crate::json::RawStr;
use crate::member::Member;

/// An event a shape has just read: the event built as the parser builds it
/// ([`Shaped::event`]), or only the few values a writer asks for, each decoded from its
/// bytes as [`Shaped::event`] decodes it (split reads one or two values of every event,
/// and builds only those analysis uses).
pub(crate) struct Shaped<'s, 'a> {
    pub(super) shape: &'s Shape,
    pub(super) f: &'s Found,
    pub(super) buf: &'a [u8],
}

impl<'a> Shaped<'_, 'a> {
    /// The event as the parser gives it (None when `wanted` does not keep it), each member
    /// decoded by the accessor a writer that needs only it calls.
    #[inline(always)]
    pub(crate) fn event(&self, wanted: Wanted) -> Option<Event<'a>> {
        let cat = self.cat();
        if !keeps_cat(cat, self.ph_x(), wanted) {
            return None;
        }
        let v = self.values();
        // The category's filter, the parser's (member.rs), applied to `args`.
        let args = if self.args_read() {
            let kept = |m: Member| m.kept_for(cat);
            Args {
                correlation: self.correlation(),
                external_id: self.external_id(),
                device: kept(Member::Device).then(|| v.int(Role::Device)).flatten(),
                grid: kept(Member::Grid).then(|| v.dims().0).flatten(),
                block: kept(Member::Block).then(|| v.dims().1).flatten(),
                input_dims: kept(Member::InputDims)
                    .then(|| v.list(Role::InputDims))
                    .flatten(),
                input_type: kept(Member::InputType)
                    .then(|| v.list(Role::InputType))
                    .flatten(),
                kernel_file: kept(Member::KernelFile)
                    .then(|| v.string(Role::KernelFile))
                    .flatten(),
                kernel_backend: kept(Member::KernelBackend)
                    .then(|| v.string(Role::KernelBackend))
                    .flatten(),
            }
        } else {
            Args::default()
        };
        Some(Event {
            cat,
            ph_x: self.ph_x(),
            ph_m: self.ph_m(),
            id: self.id(),
            name: self.name(),
            pid: v.id(Role::Pid),
            tid: v.id(Role::Tid),
            ts: self.ts(),
            dur: v.time(Role::Dur).max(0),
            args,
        })
    }

    #[inline(always)]
    fn values(&self) -> Values<'_, 'a> {
        Values {
            shape: self.shape,
            f: self.f,
            buf: self.buf,
        }
    }

    /// [`Event::cat`].
    #[inline(always)]
    pub(crate) fn cat(&self) -> Cat {
        self.shape.cat
    }

    /// [`Event::ph_x`].
    #[inline(always)]
    pub(crate) fn ph_x(&self) -> bool {
        self.shape.ph_x
    }

    /// [`Event::ph_m`].
    #[inline(always)]
    pub(crate) fn ph_m(&self) -> bool {
        self.shape.ph_m
    }

    /// [`Event::id`].
    #[inline(always)]
    pub(crate) fn id(&self) -> Option<i64> {
        self.values().int(Role::Id)
    }

    /// [`Event::ts`].
    #[inline(always)]
    pub(crate) fn ts(&self) -> i64 {
        self.values().time(Role::Ts)
    }

    /// [`Event::name`].
    #[inline(always)]
    pub(crate) fn name(&self) -> RawStr<'a> {
        self.values().string(Role::Name).unwrap_or(RawStr {
            raw: b"",
            escaped: false,
        })
    }

    /// [`crate::event::Args::correlation`] (none for the categories whose `args` are not read).
    #[inline(always)]
    pub(crate) fn correlation(&self) -> Option<i64> {
        self.args_read()
            .then(|| self.values().int(Role::Correlation))
            .flatten()
    }

    /// [`crate::event::Args::external_id`] (none for the categories whose `args` are not read).
    #[inline(always)]
    pub(crate) fn external_id(&self) -> Option<i64> {
        self.args_read()
            .then(|| self.values().int(Role::ExternalId))
            .flatten()
    }

    /// Whether this category's `args` are read (`Other` and `Flow` keep none).
    #[inline(always)]
    fn args_read(&self) -> bool {
        !matches!(self.shape.cat, Cat::Other | Cat::Flow)
    }
}
