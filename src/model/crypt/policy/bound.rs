//! kcryptd as a bound workqueue (`same_cpu_crypt`): one FIFO per CPU, each served by that CPU's
//! single worker (`max_active` 1). Work goes to the list of the CPU it was queued on: the CPU
//! that ran `crypt_endio` for a decrypt, the submitting CPU for an encrypt ([`super::Work::cpu`]).
//! Not registered as a policy of its own: the world builds it for a `dm-crypt+same_cpu_crypt…`
//! policy.

use super::{CryptQueuePolicy, Work};
use std::collections::VecDeque;

/// One FIFO per CPU; worker `t` serves list `t`.
#[derive(Debug)]
pub struct Bound {
    lists: Vec<VecDeque<Work>>,
    len: usize,
}

impl Bound {
    /// Empty lists for `cpus` CPUs.
    pub fn new(cpus: u32) -> Bound {
        Bound {
            lists: vec![VecDeque::new(); cpus.max(1) as usize],
            len: 0,
        }
    }
}

impl CryptQueuePolicy for Bound {
    fn enqueue(&mut self, work: Work) {
        let n = self.lists.len();
        self.lists[work.cpu as usize % n].push_back(work);
        self.len += 1;
    }
    fn next(&mut self, thread: usize) -> Option<Work> {
        let w = self.lists.get_mut(thread)?.pop_front();
        self.len -= usize::from(w.is_some());
        w
    }
    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::crypt::policy::CryptOp;

    #[test]
    fn each_worker_serves_only_its_cpus_list_in_order() {
        let mut b = Bound::new(2);
        let w = |bio, cpu| Work {
            bio,
            op: CryptOp::Decrypt,
            sync: true,
            cpu,
        };
        for (bio, cpu) in [(1, 0), (2, 1), (3, 0), (4, 1)] {
            b.enqueue(w(bio, cpu));
        }
        assert_eq!(b.len(), 4);
        assert_eq!(b.next(1).map(|w| w.bio), Some(2));
        assert_eq!(b.next(1).map(|w| w.bio), Some(4));
        assert_eq!(b.next(1), None, "worker 1 never takes CPU 0's work");
        assert_eq!(b.next(0).map(|w| w.bio), Some(1));
        assert_eq!(b.next(0).map(|w| w.bio), Some(3));
        assert_eq!(b.len(), 0);
        assert_eq!(b.next(7), None);
    }
}
