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

/// One node's links and colour.
#[derive(Debug, Clone, Copy, Default)]
struct Node {
    parent: Option<usize>,
    left: Option<usize>,
    right: Option<usize>,
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
            match cmp(n) {
                Ordering::Less => {
                    right = false;
                    at = self.nodes[n].left;
                }
                Ordering::Greater => {
                    right = true;
                    at = self.nodes[n].right;
                }
                Ordering::Equal => return Search::Found(n),
            }
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
            left: None,
            right: None,
            red: true,
            linked: true,
        };
        match parent {
            None => self.root = Some(n),
            Some(p) if right => self.nodes[p].right = Some(n),
            Some(p) => self.nodes[p].left = Some(n),
        }
        self.insert_color(n);
    }

    fn red(&self, n: Option<usize>) -> bool {
        n.is_some_and(|n| self.nodes[n].red)
    }

    /// Replaces `old` by `new` in `old`'s parent (or as the root).
    fn replace_child(&mut self, parent: Option<usize>, old: usize, new: Option<usize>) {
        match parent {
            None => self.root = new,
            Some(p) if self.nodes[p].left == Some(old) => self.nodes[p].left = new,
            Some(p) => self.nodes[p].right = new,
        }
    }

    fn rotate_left(&mut self, n: usize) {
        let r = self.nodes[n]
            .right
            .expect("rotate_left needs a right child");
        let parent = self.nodes[n].parent;
        let inner = self.nodes[r].left;
        self.nodes[n].right = inner;
        if let Some(i) = inner {
            self.nodes[i].parent = Some(n);
        }
        self.nodes[r].left = Some(n);
        self.nodes[r].parent = parent;
        self.replace_child(parent, n, Some(r));
        self.nodes[n].parent = Some(r);
    }

    fn rotate_right(&mut self, n: usize) {
        let l = self.nodes[n].left.expect("rotate_right needs a left child");
        let parent = self.nodes[n].parent;
        let inner = self.nodes[l].right;
        self.nodes[n].left = inner;
        if let Some(i) = inner {
            self.nodes[i].parent = Some(n);
        }
        self.nodes[l].right = Some(n);
        self.nodes[l].parent = parent;
        self.replace_child(parent, n, Some(l));
        self.nodes[n].parent = Some(l);
    }

    /// Restores the colour rules after a red node `n` was linked.
    fn insert_color(&mut self, mut n: usize) {
        while let Some(mut p) = self.nodes[n].parent.filter(|&p| self.nodes[p].red) {
            // A red parent is never the root, so the grandparent exists.
            let g = self.nodes[p].parent.expect("a red node has a parent");
            let parent_is_left = self.nodes[g].left == Some(p);
            let uncle = if parent_is_left {
                self.nodes[g].right
            } else {
                self.nodes[g].left
            };
            if let Some(u) = uncle.filter(|&u| self.nodes[u].red) {
                self.nodes[u].red = false;
                self.nodes[p].red = false;
                self.nodes[g].red = true;
                n = g;
                continue;
            }
            if parent_is_left {
                if self.nodes[p].right == Some(n) {
                    self.rotate_left(p);
                    std::mem::swap(&mut p, &mut n);
                }
                self.nodes[p].red = false;
                self.nodes[g].red = true;
                self.rotate_right(g);
            } else {
                if self.nodes[p].left == Some(n) {
                    self.rotate_right(p);
                    std::mem::swap(&mut p, &mut n);
                }
                self.nodes[p].red = false;
                self.nodes[g].red = true;
                self.rotate_left(g);
            }
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
            left: n_left,
            right: n_right,
            red: n_red,
            ..
        } = self.nodes[n];
        let (child, parent, removed_red);
        match (n_left, n_right) {
            (Some(l), Some(r)) => {
                // The successor: the leftmost node of the right subtree.
                let mut s = r;
                while let Some(l2) = self.nodes[s].left {
                    s = l2;
                }
                self.replace_child(n_parent, n, Some(s));
                child = self.nodes[s].right;
                removed_red = self.nodes[s].red;
                if s == r {
                    parent = Some(s);
                } else {
                    let sp = self.nodes[s].parent.expect("the successor has a parent");
                    if let Some(c) = child {
                        self.nodes[c].parent = Some(sp);
                    }
                    self.nodes[sp].left = child;
                    self.nodes[s].right = Some(r);
                    self.nodes[r].parent = Some(s);
                    parent = Some(sp);
                }
                self.nodes[s].parent = n_parent;
                self.nodes[s].red = n_red;
                self.nodes[s].left = Some(l);
                self.nodes[l].parent = Some(s);
            }
            _ => {
                child = n_left.or(n_right);
                parent = n_parent;
                removed_red = n_red;
                if let Some(c) = child {
                    self.nodes[c].parent = parent;
                }
                self.replace_child(parent, n, child);
            }
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
            if self.nodes[p].left == n {
                let mut o = self.nodes[p]
                    .right
                    .expect("the sibling of a short side exists");
                if self.nodes[o].red {
                    self.nodes[o].red = false;
                    self.nodes[p].red = true;
                    self.rotate_left(p);
                    o = self.nodes[p].right.expect("sibling after rotation");
                }
                let (ol, or) = (self.nodes[o].left, self.nodes[o].right);
                if !self.red(ol) && !self.red(or) {
                    self.nodes[o].red = true;
                    n = Some(p);
                    parent = self.nodes[p].parent;
                } else {
                    if !self.red(or) {
                        let ol = ol.expect("a red inner nephew");
                        self.nodes[ol].red = false;
                        self.nodes[o].red = true;
                        self.rotate_right(o);
                        o = self.nodes[p].right.expect("sibling after rotation");
                    }
                    self.nodes[o].red = self.nodes[p].red;
                    self.nodes[p].red = false;
                    if let Some(or) = self.nodes[o].right {
                        self.nodes[or].red = false;
                    }
                    self.rotate_left(p);
                    n = self.root;
                    break;
                }
            } else {
                let mut o = self.nodes[p]
                    .left
                    .expect("the sibling of a short side exists");
                if self.nodes[o].red {
                    self.nodes[o].red = false;
                    self.nodes[p].red = true;
                    self.rotate_right(p);
                    o = self.nodes[p].left.expect("sibling after rotation");
                }
                let (ol, or) = (self.nodes[o].left, self.nodes[o].right);
                if !self.red(ol) && !self.red(or) {
                    self.nodes[o].red = true;
                    n = Some(p);
                    parent = self.nodes[p].parent;
                } else {
                    if !self.red(ol) {
                        let or = or.expect("a red inner nephew");
                        self.nodes[or].red = false;
                        self.nodes[o].red = true;
                        self.rotate_left(o);
                        o = self.nodes[p].left.expect("sibling after rotation");
                    }
                    self.nodes[o].red = self.nodes[p].red;
                    self.nodes[p].red = false;
                    if let Some(ol) = self.nodes[o].left {
                        self.nodes[ol].red = false;
                    }
                    self.rotate_right(p);
                    n = self.root;
                    break;
                }
            }
        }
        if let Some(n) = n {
            self.nodes[n].red = false;
        }
    }

    /// The node after `n` in order (`rb_next`).
    pub(super) fn next(&self, n: usize) -> Option<usize> {
        if let Some(mut r) = self.nodes[n].right {
            while let Some(l) = self.nodes[r].left {
                r = l;
            }
            return Some(r);
        }
        let mut at = n;
        while let Some(p) = self.nodes[at].parent {
            if self.nodes[p].left == Some(at) {
                return Some(p);
            }
            at = p;
        }
        None
    }

    /// The node before `n` in order (`rb_prev`).
    pub(super) fn prev(&self, n: usize) -> Option<usize> {
        if let Some(mut l) = self.nodes[n].left {
            while let Some(r) = self.nodes[l].right {
                l = r;
            }
            return Some(l);
        }
        let mut at = n;
        while let Some(p) = self.nodes[at].parent {
            if self.nodes[p].right == Some(at) {
                return Some(p);
            }
            at = p;
        }
        None
    }

    /// The nodes in order (for the checks and the tests).
    pub(super) fn in_order(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = self.root;
        while let Some(l) = at.and_then(|n| self.nodes[n].left) {
            at = Some(l);
        }
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
        for c in [node.left, node.right].into_iter().flatten() {
            if self.nodes[c].parent != Some(n) {
                return Err(format!("node {c} is a child of {n} but not linked back"));
            }
            if node.red && self.nodes[c].red {
                return Err(format!("red node {n} has a red child {c}"));
            }
        }
        let (l, r) = (
            self.check_below(node.left, seen)?,
            self.check_below(node.right, seen)?,
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

    #[test]
    fn ascending_inserts_rotate_as_the_kernel_does() {
        // 0, 1, 2 in order: the third insert rotates left at the root, so 1 is the root with
        // 0 and 2 below, all but the root red.
        let keys = [10, 20, 30];
        let mut t = RbTree::default();
        for n in 0..3 {
            add(&mut t, &keys, n);
        }
        assert_eq!(t.root, Some(1));
        assert_eq!(t.nodes[1].left, Some(0));
        assert_eq!(t.nodes[1].right, Some(2));
        assert!(!t.nodes[1].red && t.nodes[0].red && t.nodes[2].red);
        t.check().unwrap();
        // Erasing the root with two children splices in its successor, 2, in its colour.
        t.erase(1);
        assert_eq!(t.root, Some(2));
        assert_eq!(t.nodes[2].left, Some(0));
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
        let keys = [10, 20, 30];
        let mut t = RbTree::default();
        for n in 0..3 {
            add(&mut t, &keys, n);
        }
        t.nodes[1].red = true;
        assert!(t.check().is_err());
    }
}
