//! What decides a task's result, as text a database can key on
//! (docs/identity.md): two tasks of equal configuration identity, method
//! identity and start cell give the same success, outcome, attempts and
//! visited on any machine, so a stored result stands for every such task
//! of any sweep.

use tour::Method;

use super::{ConfigEntry, MoveSpec, Sweep};

impl ConfigEntry {
    /// The board's sides, how the moves were given (a rule or a list: the
    /// random methods' task seeds hash that too) and the move list in the
    /// order the walks try it: `8x8 rule 2,1: 2,1 1,2 -1,2 ..`.
    pub fn identity(&self) -> String {
        let given = match &self.moves {
            MoveSpec::Rule(_) => format!("rule {}", self.moves.label()),
            MoveSpec::List(_) => "list".to_string(),
        };
        let config = self.configuration();
        let moves: Vec<String> = config.moves().iter().map(move_text).collect();
        format!("{} {given}: {}", self.shape_label(), moves.join(" "))
    }
}

/// A move as identities and [`board_moves`] keys write it (`2,-1`), and
/// [`move_list`] reads it back.
fn move_text<T: ToString>(mv: &[T]) -> String {
    mv.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// The number of dimensions of the board a configuration identity names
/// (`8x8x8 rule 3,2: ..` is 3D); None for text that is not one.
pub fn identity_dims(identity: &str) -> Option<usize> {
    let shape = identity.split_whitespace().next()?;
    let sides = shape.split('x');
    sides.clone().all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| sides.count())
}

/// The key existence facts are stored under (docs/identity.md#existence-facts):
/// the board's sides and its move *set*, sorted, since whether a tour
/// exists depends on neither the order the walks try moves in nor how
/// they were given. `5x5: -2,-1 -2,1 -1,-2 ..`.
pub fn board_moves(sides: &[u32], moves: &tour::Moves) -> String {
    let moves = moves.iter().map(|mv| mv.iter().map(|&c| i64::from(c)).collect()).collect();
    board_moves_key(&super::expand::shape(sides), moves)
}

/// [`board_moves`] of a configuration identity (`8x8 rule 2,1: 2,1 1,2
/// ..`); None for text that is not one (an unparsed sweep's).
pub fn board_moves_of(identity: &str) -> Option<String> {
    identity_dims(identity)?;
    let (head, list) = identity.split_once(": ")?;
    let shape = head.split_whitespace().next()?;
    Some(board_moves_key(shape, move_list(list)?))
}

/// The board and move set a [`board_moves`] key names; None for text that
/// is not one.
pub fn board_moves_configuration(key: &str) -> Option<tour::Configuration> {
    let (shape, list) = key.split_once(": ")?;
    let sides = shape.split('x').map(|s| s.parse::<u32>().ok()).collect::<Option<Vec<u32>>>()?;
    let moves = tour::Moves::explicit(&move_list(list)?, sides.len()).ok()?;
    let board = tour::Board::with_max_cells(&sides, u64::MAX).ok()?;
    tour::Configuration::new(board, moves).ok()
}

/// The moves of a list [`move_text`] wrote, space-separated.
fn move_list(list: &str) -> Option<Vec<Vec<i64>>> {
    list.split(' ').map(|mv| mv.split(',').map(|c| c.parse::<i64>().ok()).collect()).collect()
}

fn board_moves_key(shape: &str, mut moves: Vec<Vec<i64>>) -> String {
    moves.sort_unstable();
    let moves: Vec<String> = moves.iter().map(|mv| move_text(mv)).collect();
    format!("{shape}: {}", moves.join(" "))
}

/// True when results of the method of this identity ([`Sweep::method_identity`])
/// sought closed tours: the `nn` methods always, `bt` and `solve` when the
/// sweep asked for closed tours. Its tour is then closed, and its `no-tour`
/// means no closed tour passes through the start, so none exists at all.
pub fn identity_seeks_closed(identity: &str) -> bool {
    identity.starts_with("nn") || identity.ends_with(" closed")
}

impl Sweep {
    /// `method`'s identity in this sweep: its name and engine version,
    /// then only the parameters it reads: the sweep seed for the random
    /// methods (their task seeds derive from it), the budget of `bt` and
    /// `solve` and whether they seek closed tours, the iteration cap of the
    /// `nn` methods. `w v1`, `wr v1 seed 11`, `bt v1 budget 200000 open`.
    pub fn method_identity(&self, method: Method) -> String {
        let mut id = format!("{} v{}", method.name(), method.engine_version());
        if method.is_random() {
            id += &format!(" seed {}", self.seed());
        }
        match method {
            Method::Bt | Method::Solve => {
                let shape = if method.seeks_closed(self.closed()) { "closed" } else { "open" };
                id += &format!(" budget {} {shape}", self.budget());
            }
            Method::Nn(_) => id += &format!(" iterations {}", self.iterations()),
            _ => {}
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use crate::Sweep;

    fn sweep(extra: &str, grid: &str) -> Sweep {
        Sweep::parse(&format!(
            "name = \"i\"\nseed = 11\nstarts = 2\nmethods = [\"w\", \"wr\", \"bt\", \"nn\"]\n{extra}\n[[grid]]\n{grid}"
        ))
        .unwrap()
    }

    #[test]
    fn a_configuration_is_its_shape_and_ordered_moves() {
        let s = sweep("", "rule = [2, 1]\ndims = [2]\nn = [5]");
        let id = s.configurations()[0].identity();
        assert!(id.starts_with("5x5 rule 2,1: "), "{id}");
        assert_eq!(id.split(": ").nth(1).unwrap().split(' ').count(), 8, "eight knight moves: {id}");
        let listed = sweep("", "moves = [[1, 2], [2, 1]]\ndims = [2]\nn = [5]");
        let reversed = sweep("", "moves = [[2, 1], [1, 2]]\ndims = [2]\nn = [5]");
        assert_eq!(listed.configurations()[0].identity(), "5x5 list: 1,2 2,1");
        assert_ne!(listed.configurations()[0].identity(), reversed.configurations()[0].identity(), "order counts");
    }

    #[test]
    fn facts_are_keyed_by_the_sorted_move_set() {
        let listed = sweep("", "moves = [[1, 2], [2, 1]]\ndims = [2]\nn = [5]");
        let reversed = sweep("", "moves = [[2, 1], [1, 2]]\ndims = [2]\nn = [5]");
        let key = |s: &Sweep| super::board_moves_of(&s.configurations()[0].identity());
        assert_eq!(key(&listed).as_deref(), Some("5x5: 1,2 2,1"));
        assert_eq!(key(&listed), key(&reversed), "order does not count");
        let rule = sweep("", "rule = [2, 1]\ndims = [2]\nn = [5]");
        let c = rule.configurations()[0].configuration();
        assert_eq!(key(&rule), Some(super::board_moves(&[5, 5], c.moves())));
        assert_eq!(key(&rule).unwrap(), "5x5: -2,-1 -2,1 -1,-2 -1,2 1,-2 1,2 2,-1 2,1");
        assert_eq!(super::board_moves_of("unparsed sweep 1a2b config 0"), None);
        let back = super::board_moves_configuration(&key(&rule).unwrap()).unwrap();
        assert_eq!((back.board().sides(), back.eligible_count()), (&[5, 5][..], c.eligible_count()));
    }

    #[test]
    fn a_method_names_only_the_parameters_it_reads() {
        let s = sweep("budget = 500", "rule = [2, 1]\ndims = [2]\nn = [6]");
        let ids: Vec<String> = s.methods().iter().map(|&m| s.method_identity(m)).collect();
        assert_eq!(ids, ["w v1", "wr v1 seed 11", "bt v1 budget 500 open", "nn v1 seed 11 iterations 100"]);
        let reseeded = Sweep::parse(&s.canonical_toml().replace("seed = 11", "seed = 12")).unwrap();
        assert_eq!(reseeded.method_identity(tour::Method::W), "w v1", "a walk draws no random numbers");
        assert_ne!(reseeded.method_identity(tour::Method::Wr), ids[1]);
    }
}
