//! Page allocation as dm-crypt sees it: bounce pages for write encryption.
//!
//! For now memory is unlimited: every allocation succeeds, and the allocator only counts pages so
//! conservation (allocated = freed + held) can be checked. The memory-pressure model (zones,
//! watermarks, mempools, kswapd) replaces [`Allocator::Unlimited`] with a real zone behind the same
//! calls.

/// Where bounce pages come from.
#[derive(Debug, Clone)]
pub enum Allocator {
    /// Allocations always succeed.
    Unlimited {
        /// Pages handed out so far.
        allocated: u64,
        /// Pages returned so far.
        freed: u64,
    },
}

impl Default for Allocator {
    fn default() -> Self {
        Allocator::Unlimited {
            allocated: 0,
            freed: 0,
        }
    }
}

impl Allocator {
    /// Allocates `pages` bounce pages for a write clone; `true` if granted.
    pub fn alloc_bounce(&mut self, pages: u32) -> bool {
        match self {
            Allocator::Unlimited { allocated, .. } => {
                *allocated += u64::from(pages);
                true
            }
        }
    }

    /// Returns `pages` bounce pages (the write completed).
    pub fn free_bounce(&mut self, pages: u32) {
        match self {
            Allocator::Unlimited { freed, .. } => *freed += u64::from(pages),
        }
    }

    /// Pages currently held by dm-crypt.
    pub fn held(&self) -> u64 {
        match self {
            Allocator::Unlimited { allocated, freed } => allocated - freed,
        }
    }
}

/// Pages needed to hold `bytes` (4 KiB pages).
pub fn pages_for(bytes: u32) -> u32 {
    bytes.div_ceil(4096)
}
