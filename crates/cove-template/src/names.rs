//! Field names used by templates, interned per cache. A compiled template
//! refers to names by number, so a binding can keep each name as a ready
//! Lua string or QuickJS atom (indexed by [`Key::id`]) instead of hashing
//! the text on every lookup.

use std::collections::HashMap;
use std::rc::Rc;

/// Names beyond this many are not interned (they get [`Key::UNCACHED`]):
/// a bound on what `render_string` with ever-new names can make a binding keep.
const MAX_NAMES: usize = 65_536;

/// A field name as compiled into a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// Index into [`Names`], or [`Key::UNCACHED`].
    pub id: u32,
    pub name: Rc<str>,
}

impl Key {
    /// The id of a name that was not interned; look it up by its text.
    pub const UNCACHED: u32 = u32::MAX;
}

/// The interner. Ids are dense and never reused, so a binding can extend
/// its own table of ready keys as [`Names::len`] grows.
#[derive(Debug, Default)]
pub struct Names {
    list: Vec<Rc<str>>,
    ids: HashMap<Rc<str>, u32>,
}

/// `loop` always has id 0: the renderer checks for it on every path.
pub(crate) const LOOP: u32 = 0;

impl Names {
    pub fn new() -> Names {
        let mut n = Names::default();
        n.key("loop");
        n
    }

    /// The key for `name`, interning it if there is room.
    pub fn key(&mut self, name: &str) -> Key {
        if let Some((k, &id)) = self.ids.get_key_value(name) {
            return Key {
                id,
                name: k.clone(),
            };
        }
        let name: Rc<str> = Rc::from(name);
        if self.list.len() >= MAX_NAMES {
            return Key {
                id: Key::UNCACHED,
                name,
            };
        }
        let id = self.list.len() as u32;
        self.list.push(name.clone());
        self.ids.insert(name.clone(), id);
        Key { id, name }
    }

    /// How many names are interned (ids `0..len`).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The text of name `id`.
    pub fn get(&self, id: u32) -> Option<&str> {
        self.list.get(id as usize).map(|s| &**s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_with_dense_stable_ids() {
        let mut n = Names::new();
        assert_eq!(n.key("loop").id, LOOP);
        let a = n.key("title");
        let b = n.key("items");
        assert_eq!(n.key("title"), a);
        assert_eq!((a.id, b.id), (1, 2));
        assert_eq!(n.get(2), Some("items"));
        assert_eq!(n.len(), 3);
    }
}
