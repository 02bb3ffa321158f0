//! CFQ's priority tree (`cfqd->prio_trees[]`): the busy queues filed by the sector of their next
//! request, searched for a queue whose next request lies close to the disk head
//! (`cfq_close_cooperator`).
//!
//! The tree is a red-black tree whose shape follows the kernel's `lib/rbtree.c` (2.6.30 to
//! 2.6.33: insertion as `rb_link_node` then `rb_insert_color`, removal as `rb_erase`, which
//! splices in the in-order successor). The shape matters because CFQ does not re-file a queue
//! when its next request changes at a dispatch: a node keeps the place its key had when it was
//! filed, while a search compares against each visited queue's *current* next request. With
//! stale keys the node a search ends at, and so the queue found, depends on the tree's shape,
//! as in the kernel. The tree holds no keys of its own: the caller's comparison supplies them.
//!
//! Nodes are the callers' small integer ids (CFQ's queue indices), kept in an arena.

use std::cmp::Ordering;

/// The two sides of a node, as indices into [`Node::kids`].
const LEFT: usize = 0;
/// See [`LEFT`].
const RIGHT: usize = 1;

/// One node's links and colour.
#[derive(Debug, Clone, Copy, Default)]
struct Node {
    parent: Option<usize>,
    /// The left and the right child.
    kids: [Option<usize>; 2],
    red: bool,
    linked: bool,
}

/// Where a search ended: at a node that compared equal, or at the empty place under `parent`
/// (on its right side when `right`) where the key would be linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Search {
    /// A node compared equal.
    Found(usize),
    /// No node compared equal; the key belongs under `parent` (`None`: the tree is empty).
    Vacant {
        /// The last node visited, whose empty child is the key's place.
        parent: Option<usize>,
        /// The place is `parent`'s right child.
        right: bool,
    },
}

/// A red-black tree over caller ids, shaped as the kernel's `lib/rbtree.c` shapes it.
#[derive(Debug, Clone, Default)]
pub(super) struct RbTree {
    root: Option<usize>,
    nodes: Vec<Node>,
}

impl RbTree {
    /// Whether node `n` is in the tree.
    pub(super) fn contains(&self, n: usize) -> bool {
        self.nodes.get(n).is_some_and(|x| x.linked)
    }

    /// Walks down from the root: at each node `cmp(node)` says whether the key sought is less
    /// (go left), greater (go right) or equal (stop) (`cfq_prio_tree_lookup`).
    pub(super) fn search(&self, mut cmp: impl FnMut(usize) -> Ordering) -> Search {
        let (mut at, mut parent, mut right) = (self.root, None, false);
        while let Some(n) = at {
            parent = Some(n);
            right = match cmp(n) {
                Ordering::Less => false,
                Ordering::Greater => true,
                Ordering::Equal => return Search::Found(n),
            };
            at = self.nodes[n].kids[usize::from(right)];
        }
        Search::Vacant { parent, right }
    }

    /// Links node `n` at the empty place a [`RbTree::search`] returned and rebalances
    /// (`rb_link_node`, `rb_insert_color`).
    pub(super) fn insert(&mut self, n: usize, parent: Option<usize>, right: bool) {
        if self.nodes.len() <= n {
            self.nodes.resize(n + 1, Node::default());
        }
        debug_assert!(!self.nodes[n].linked, "node {n} is already in the tree");
        self.nodes[n] = Node {
            parent,
            kids: [None; 2],
            red: true,
            linked: true,
        };
        match parent {
            None => self.root = Some(n),
            Some(p) => self.nodes[p].kids[usize::from(right)] = Some(n),
        }
        self.insert_color(n);
    }

    fn red(&self, n: Option<usize>) -> bool {
        n.is_some_and(|n| self.nodes[n].red)
    }

    /// The side of its parent `p` that child place `n` is on.
    fn side(&self, p: usize, n: Option<usize>) -> usize {
        if self.nodes[p].kids[LEFT] == n {
            LEFT
        } else {
            RIGHT
        }
    }

    /// Replaces `old` by `new` in `old`'s parent (or as the root).
    fn replace_child(&mut self, parent: Option<usize>, old: usize, new: Option<usize>) {
        match parent {
            None => self.root = new,
            Some(p) => {
                let side = self.side(p, Some(old));
                self.nodes[p].kids[side] = new;
            }
        }
    }

    /// Rotates at `n`, which goes down on side `down` (`__rb_rotate_left` for [`LEFT`],
    /// `__rb_rotate_right` for [`RIGHT`]): its child on the other side takes its place.
    fn rotate(&mut self, n: usize, down: usize) {
        let up = self.nodes[n].kids[1 - down].expect("a rotation needs the rising child");
        let parent = self.nodes[n].parent;
        let inner = self.nodes[up].kids[down];
        self.nodes[n].kids[1 - down] = inner;
        if let Some(i) = inner {
            self.nodes[i].parent = Some(n);
        }
        self.nodes[up].kids[down] = Some(n);
        self.nodes[up].parent = parent;
        self.replace_child(parent, n, Some(up));
        self.nodes[n].parent = Some(up);
    }

    /// Restores the colour rules after a red node `n` was linked.
    fn insert_color(&mut self, mut n: usize) {
        while let Some(mut p) = self.nodes[n].parent.filter(|&p| self.nodes[p].red) {
            // A red parent is never the root, so the grandparent exists.
            let g = self.nodes[p].parent.expect("a red node has a parent");
            let side = self.side(g, Some(p));
            if let Some(u) = self.nodes[g].kids[1 - side].filter(|&u| self.nodes[u].red) {
                self.nodes[u].red = false;
                self.nodes[p].red = false;
                self.nodes[g].red = true;
                n = g;
                continue;
            }
            if self.nodes[p].kids[1 - side] == Some(n) {
                self.rotate(p, side);
                std::mem::swap(&mut p, &mut n);
            }
            self.nodes[p].red = false;
            self.nodes[g].red = true;
            self.rotate(g, 1 - side);
        }
        if let Some(r) = self.root {
            self.nodes[r].red = false;
        }
    }

    /// Unlinks node `n` (`rb_erase`): a node with two children is replaced by its in-order
    /// successor, which takes its place and colour.
    pub(super) fn erase(&mut self, n: usize) {
        debug_assert!(self.contains(n), "node {n} is not in the tree");
        let Node {
            parent: n_parent,
            kids: [n_left, n_right],
            red: n_red,
            ..
        } = self.nodes[n];
        let (child, parent, removed_red);
        if let (Some(l), Some(r)) = (n_left, n_right) {
            // The successor: the leftmost node of the right subtree.
            let s = self.extreme(r, LEFT);
            self.replace_child(n_parent, n, Some(s));
            child = self.nodes[s].kids[RIGHT];
            removed_red = self.nodes[s].red;
            if s == r {
                parent = Some(s);
            } else {
                let sp = self.nodes[s].parent.expect("the successor has a parent");
                if let Some(c) = child {
                    self.nodes[c].parent = Some(sp);
                }
                self.nodes[sp].kids[LEFT] = child;
                self.nodes[s].kids[RIGHT] = Some(r);
                self.nodes[r].parent = Some(s);
                parent = Some(sp);
            }
            self.nodes[s].parent = n_parent;
            self.nodes[s].red = n_red;
            self.nodes[s].kids[LEFT] = Some(l);
            self.nodes[l].parent = Some(s);
        } else {
            child = n_left.or(n_right);
            parent = n_parent;
            removed_red = n_red;
            if let Some(c) = child {
                self.nodes[c].parent = parent;
            }
            self.replace_child(parent, n, child);
        }
        self.nodes[n] = Node::default();
        if !removed_red {
            self.erase_color(child, parent);
        }
    }

    /// Restores the colour rules after a black node was removed above `n` (which may be an
    /// empty place under `parent`).
    fn erase_color(&mut self, mut n: Option<usize>, mut parent: Option<usize>) {
        while !self.red(n) && n != self.root {
            let p = parent.expect("a node below the root has a parent");
            let side = self.side(p, n);
            let mut o = self.nodes[p].kids[1 - side].expect("the short side has a sibling");
            if self.nodes[o].red {
                self.nodes[o].red = false;
                self.nodes[p].red = true;
                self.rotate(p, side);
                o = self.nodes[p].kids[1 - side].expect("a sibling after the rotation");
            }
            let [near, far] = [self.nodes[o].kids[side], self.nodes[o].kids[1 - side]];
            if !self.red(near) && !self.red(far) {
                self.nodes[o].red = true;
                n = Some(p);
                parent = self.nodes[p].parent;
                continue;
            }
            if !self.red(far) {
                let near = near.expect("a red near nephew");
                self.nodes[near].red = false;
                self.nodes[o].red = true;
                self.rotate(o, 1 - side);
                o = self.nodes[p].kids[1 - side].expect("a sibling after the rotation");
            }
            self.nodes[o].red = self.nodes[p].red;
            self.nodes[p].red = false;
            if let Some(f) = self.nodes[o].kids[1 - side] {
                self.nodes[f].red = false;
            }
            self.rotate(p, side);
            n = self.root;
            break;
        }
        if let Some(n) = n {
            self.nodes[n].red = false;
        }
    }

    /// The last node reached from `n` going to side `side` only.
    fn extreme(&self, mut n: usize, side: usize) -> usize {
        while let Some(k) = self.nodes[n].kids[side] {
            n = k;
        }
        n
    }

    /// The node after `n` in order on side `side` (`rb_next` for [`RIGHT`], `rb_prev` for
    /// [`LEFT`]).
    fn step(&self, n: usize, side: usize) -> Option<usize> {
        if let Some(k) = self.nodes[n].kids[side] {
            return Some(self.extreme(k, 1 - side));
        }
        let mut at = n;
        while let Some(p) = self.nodes[at].parent {
            if self.nodes[p].kids[1 - side] == Some(at) {
                return Some(p);
            }
            at = p;
        }
        None
    }

    /// The node after `n` in order (`rb_next`).
    pub(super) fn next(&self, n: usize) -> Option<usize> {
        self.step(n, RIGHT)
    }

    /// The node before `n` in order (`rb_prev`).
    pub(super) fn prev(&self, n: usize) -> Option<usize> {
        self.step(n, LEFT)
    }

    /// The nodes in order (for the checks and the tests).
    pub(super) fn in_order(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = self.root.map(|r| self.extreme(r, LEFT));
        while let Some(n) = at {
            out.push(n);
            at = self.next(n);
        }
        out
    }

    /// Checks the tree's links and colour rules: parent links agree with child links, the root
    /// is black, no red node has a red child, and every path from the root to an empty place
    /// passes the same number of black nodes. The first broken rule, if any.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.red(self.root) {
            return Err("the root is red".into());
        }
        if let Some(r) = self.root
            && self.nodes[r].parent.is_some()
        {
            return Err(format!("the root {r} has a parent"));
        }
        let linked = self.nodes.iter().filter(|n| n.linked).count();
        let mut seen = 0;
        self.check_below(self.root, &mut seen)?;
        if seen != linked {
            return Err(format!(
                "{linked} nodes linked, {seen} reachable from the root"
            ));
        }
        Ok(())
    }

    /// The black height below `n`, after checking its subtree.
    fn check_below(&self, n: Option<usize>, seen: &mut usize) -> Result<usize, String> {
        let Some(n) = n else {
            return Ok(1);
        };
        *seen += 1;
        let node = self.nodes[n];
        for c in node.kids.into_iter().flatten() {
            if self.nodes[c].parent != Some(n) {
                return Err(format!("node {c} is a child of {n} but not linked back"));
            }
            if node.red && self.nodes[c].red {
                return Err(format!("red node {n} has a red child {c}"));
            }
        }
        let (l, r) = (
            self.check_below(node.kids[LEFT], seen)?,
            self.check_below(node.kids[RIGHT], seen)?,
        );
        if l != r {
            return Err(format!("black heights {l} and {r} differ below node {n}"));
        }
        Ok(l + usize::from(!node.red))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files `n` by `keys[n]` (distinct keys), as `cfq_prio_tree_add` does.
    fn add(t: &mut RbTree, keys: &[u64], n: usize) {
        match t.search(|m| keys[n].cmp(&keys[m])) {
            Search::Vacant { parent, right } => t.insert(n, parent, right),
            Search::Found(m) => panic!("key of {n} equals that of {m}"),
        }
    }

    /// A small deterministic generator (no RNG stream is needed for a data-structure test).
    fn lcg(s: &mut u64) -> u64 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *s >> 33
    }

    /// The tree that keys 10, 20 and 30 inserted in that order make.
    fn ascending_three() -> RbTree {
        let keys = [10, 20, 30];
        let mut t = RbTree::default();
        for n in 0..3 {
            add(&mut t, &keys, n);
        }
        t
    }

    #[test]
    fn ascending_inserts_rotate_as_the_kernel_does() {
        // 0, 1, 2 in order: the third insert rotates left at the root, so 1 is the root with
        // 0 and 2 below, all but the root red.
        let mut t = ascending_three();
        assert_eq!(t.root, Some(1));
        assert_eq!(t.nodes[1].kids, [Some(0), Some(2)]);
        assert!(!t.nodes[1].red && t.nodes[0].red && t.nodes[2].red);
        t.check().unwrap();
        // Erasing the root with two children splices in its successor, 2, in its colour.
        t.erase(1);
        assert_eq!(t.root, Some(2));
        assert_eq!(t.nodes[2].kids, [Some(0), None]);
        assert!(!t.nodes[2].red && t.nodes[0].red);
        assert!(!t.contains(1));
        t.check().unwrap();
    }

    #[test]
    fn random_inserts_and_erases_keep_order_and_colour_rules() {
        let mut s = 7;
        for _ in 0..200 {
            let n = 1 + (lcg(&mut s) % 24) as usize;
            let keys: Vec<u64> = (0..n as u64).map(|i| i * 7919 % 1009 + i * 2000).collect();
            let mut t = RbTree::default();
            let mut inside = vec![false; n];
            for _ in 0..100 {
                let i = (lcg(&mut s) % n as u64) as usize;
                if inside[i] {
                    t.erase(i);
                } else {
                    add(&mut t, &keys, i);
                }
                inside[i] = !inside[i];
                t.check().unwrap();
                let mut want: Vec<usize> = (0..n).filter(|&i| inside[i]).collect();
                want.sort_by_key(|&i| keys[i]);
                assert_eq!(t.in_order(), want);
                for w in want.windows(2) {
                    assert_eq!(t.next(w[0]), Some(w[1]));
                    assert_eq!(t.prev(w[1]), Some(w[0]));
                }
            }
        }
    }

    #[test]
    fn a_search_ends_at_the_parent_of_the_empty_place() {
        let keys = [100, 200];
        let mut t = RbTree::default();
        add(&mut t, &keys, 0);
        add(&mut t, &keys, 1);
        // 150 lies right of 100 and left of 200: the empty place is 200's left child.
        assert_eq!(
            t.search(|m| 150u64.cmp(&keys[m])),
            Search::Vacant {
                parent: Some(1),
                right: false
            }
        );
        assert_eq!(t.search(|m| 200u64.cmp(&keys[m])), Search::Found(1));
        assert!(t.check().is_ok());
    }

    #[test]
    fn check_finds_a_broken_tree() {
        let mut t = ascending_three();
        t.nodes[1].red = true;
        assert!(t.check().is_err());
    }
}
