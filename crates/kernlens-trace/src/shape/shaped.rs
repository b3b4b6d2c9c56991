//! An event a learned shape has just read, handed to its writer
//! ([`crate::scan::Put::put_shaped`]) as byte ranges by role: built into an [`Event`] when
//! the writer wants it, or asked for the one or two members it needs, each decoded as the
//! event would hold it.

use super::{Found, Role, Shape, Values};
use crate::event::{Cat, Event, Wanted};
use crate::json::RawStr;

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
    /// The event as the parser gives it (None when `wanted` does not keep it).
    #[inline(always)]
    pub(crate) fn event(&self, wanted: Wanted) -> Option<Event<'a>> {
        self.shape.event(self.f, self.buf, wanted)
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

    /// Whether [`Shape::event`] reads this category's `args` (its `Cat::Other | Cat::Flow`
    /// test: keep the two alike).
    #[inline(always)]
    fn args_read(&self) -> bool {
        !matches!(self.shape.cat, Cat::Other | Cat::Flow)
    }
}
