//! The Kineto event members the reader uses: one table for the parser (event.rs) and
//! the learned shapes (shape.rs), so the two can never disagree on a name (trace.md "Input format (what the reader relies on)", trace.md "Event classification (one pass)").

use crate::event::Cat;

/// A member of an event object the reader reads; everything else is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Member {
    // Top level.
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
    // Inside `args`.
    Correlation,
    ExternalId,
    Device,
    Grid,
    Block,
    InputDims,
    InputType,
    KernelFile,
    KernelBackend,
}

impl Member {
    /// The member named `key` (as written, unescaped) at the top level of an event.
    #[inline(always)]
    pub(crate) fn from_key(key: &[u8]) -> Option<Member> {
        Some(match key {
            b"ph" => Member::Ph,
            b"cat" => Member::Cat,
            b"name" => Member::Name,
            b"pid" => Member::Pid,
            b"tid" => Member::Tid,
            b"ts" => Member::Ts,
            b"dur" => Member::Dur,
            b"id" => Member::Id,
            b"args" => Member::Args,
            _ => return None,
        })
    }

    /// The member named `key` inside an event's `args` object.
    #[inline(always)]
    pub(crate) fn from_arg_key(key: &[u8]) -> Option<Member> {
        Some(match key {
            b"correlation" => Member::Correlation,
            b"External id" => Member::ExternalId,
            b"device" => Member::Device,
            b"grid" => Member::Grid,
            b"block" => Member::Block,
            b"Input Dims" => Member::InputDims,
            b"Input type" => Member::InputType,
            b"kernel_file" => Member::KernelFile,
            b"kernel_backend" => Member::KernelBackend,
            _ => return None,
        })
    }

    /// Whether this `args` member is read for events of `cat` (the others are skipped).
    #[inline(always)]
    pub(crate) fn kept_for(self, cat: Cat) -> bool {
        match self {
            Member::Correlation | Member::ExternalId => true,
            Member::Device => cat.is_gpu(),
            Member::Grid | Member::Block => cat == Cat::Kernel,
            Member::InputDims | Member::InputType | Member::KernelFile | Member::KernelBackend => {
                cat == Cat::CpuOp
            }
            _ => false,
        }
    }
}
