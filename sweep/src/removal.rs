//! What removing a sweep did (`ksweep rm`): the coordinator's answer and
//! the offline one alike.

use crate::short_id;

/// A removed sweep and what became of its results: the ones no other
/// sweep had were deleted, the ones other sweeps also refer to kept
/// (results are stored once per task identity, docs/identity.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removal {
    /// The removed sweep's id.
    pub sweep_id: String,
    /// Its name.
    pub name: String,
    /// Results deleted with it: no other sweep had them.
    pub tasks_deleted: u64,
    /// Results kept: other sweeps refer to them too.
    pub tasks_kept: u64,
}

impl Removal {
    /// For people: `removed sweep 3675248c (quick): 1892 results deleted,
    /// 10 kept (other sweeps have them)`.
    pub fn text(&self) -> String {
        let mut line = format!(
            "removed sweep {} ({}): {} results deleted",
            short_id(&self.sweep_id),
            self.name,
            self.tasks_deleted
        );
        if self.tasks_kept > 0 {
            line.push_str(&format!(", {} kept (other sweeps have them)", self.tasks_kept));
        }
        line
    }
}
