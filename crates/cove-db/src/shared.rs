//! `SharedDb`: one worker's connection, held by its script engine (the
//! scripts' statements) and by its server (the end of the event-loop turn:
//! group commit), both on the worker's thread.

use std::cell::RefCell;
use std::ops::Deref;
use std::rc::Rc;

use cove_core::{DbTurn, TurnTx};

use crate::Db;

/// A worker's [`Db`], shared by its engine and its server. Borrowed only
/// for the length of one statement or one commit: no script call is in
/// progress while the server ends the turn.
#[derive(Clone, Debug)]
pub struct SharedDb(Rc<RefCell<Db>>);

impl SharedDb {
    pub fn new(db: Db) -> SharedDb {
        SharedDb(Rc::new(RefCell::new(db)))
    }
}

impl Deref for SharedDb {
    type Target = RefCell<Db>;
    #[inline]
    fn deref(&self) -> &RefCell<Db> {
        &self.0
    }
}

impl DbTurn for SharedDb {
    #[inline]
    fn turn_tx(&self) -> TurnTx {
        self.0.borrow().turn_tx()
    }
    fn commit_group(&self) -> bool {
        self.0.borrow_mut().commit_group()
    }
    #[inline]
    fn group_result(&self, group: u64) -> Option<bool> {
        self.0.borrow().group_result(group)
    }
    fn pause_group_commit(&self, paused: bool) {
        self.0.borrow_mut().pause_group_commit(paused);
    }
}
