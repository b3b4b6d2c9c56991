//! A memo hit allocates nothing (ident.md "Performance goals"), checked with a counting allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use kernlens_ident::KeyMemo;

/// Counts allocations made by the current thread only, so the test harness's
/// other threads cannot disturb the count.
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn memo_hits_do_not_allocate() {
    let names = [
        "hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd",
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        "triton_poi_fused_gelu_view_2",
    ];
    let mut memo = KeyMemo::with_capacity(names.len());
    let before_misses = allocations();
    for name in names {
        memo.get(name);
    }
    assert!(
        allocations() > before_misses,
        "the counter does not see allocations"
    );

    let before_hits = allocations();
    let mut total = 0;
    for _ in 0..1000 {
        for name in names {
            total += memo.get(name).native.len();
        }
    }
    assert_eq!(allocations(), before_hits, "memo hits allocated");
    assert!(total > 0);
    assert_eq!(memo.stats().hits, 3000);
    assert_eq!(memo.stats().misses, 3);
    assert_eq!(memo.stats().distinct, 3);
}
