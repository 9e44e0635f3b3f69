//! The last few readings of a message, kept so one turn reads it once.

/// Results of the last few readings, per thread: a turn reads one message
/// in several stages (own problem, claim, unit mapping, classification,
/// the reply), and each would parse it again.
pub(super) struct Recent<T> {
    kept: std::cell::RefCell<std::collections::VecDeque<(String, T)>>,
}

/// How many readings [`Recent`] keeps: the message, the pending question
/// and the tutor's question fit with room to spare.
const RECENT_KEPT: usize = 8;

impl<T: Clone> Recent<T> {
    pub(super) const fn new() -> Self {
        Recent {
            kept: std::cell::RefCell::new(std::collections::VecDeque::new()),
        }
    }

    pub(super) fn get_or(&self, text: &str, read: impl FnOnce() -> T) -> T {
        if let Some((_, found)) = self.kept.borrow().iter().find(|(t, _)| t == text) {
            return found.clone();
        }
        let value = read();
        let mut kept = self.kept.borrow_mut();
        if kept.len() == RECENT_KEPT {
            kept.pop_front();
        }
        kept.push_back((text.to_owned(), value.clone()));
        value
    }
}
