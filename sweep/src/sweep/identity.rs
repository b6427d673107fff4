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
        let moves: Vec<String> =
            config.moves().iter().map(|mv| mv.iter().map(i32::to_string).collect::<Vec<_>>().join(",")).collect();
        format!("{} {given}: {}", self.shape_label(), moves.join(" "))
    }
}

/// The number of dimensions of the board a configuration identity names
/// (`8x8x8 rule 3,2: ..` is 3D); None for text that is not one.
pub fn identity_dims(identity: &str) -> Option<usize> {
    let shape = identity.split_whitespace().next()?;
    let sides = shape.split('x');
    sides.clone().all(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| sides.count())
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
    fn a_method_names_only_the_parameters_it_reads() {
        let s = sweep("budget = 500", "rule = [2, 1]\ndims = [2]\nn = [6]");
        let ids: Vec<String> = s.methods().iter().map(|&m| s.method_identity(m)).collect();
        assert_eq!(ids, ["w v1", "wr v1 seed 11", "bt v1 budget 500 open", "nn v1 seed 11 iterations 100"]);
        let reseeded = Sweep::parse(&s.canonical_toml().replace("seed = 11", "seed = 12")).unwrap();
        assert_eq!(reseeded.method_identity(tour::Method::W), "w v1", "a walk draws no random numbers");
        assert_ne!(reseeded.method_identity(tour::Method::Wr), ids[1]);
    }
}
