//! Spec texts the tests of several crates share (feature `fixtures`, for
//! their dev-dependencies), so each test names only what is its own.

/// A small sweep of the (2,1) knight on n x n boards, one for each of `ns`,
/// with `starts` starts and the methods w and aw, named `name` and seeded
/// with `seed`: milliseconds of work.
pub fn knight_spec(name: &str, seed: u64, starts: u64, ns: &[u32]) -> String {
    let ns: Vec<String> = ns.iter().map(u32::to_string).collect();
    format!(
        "name = \"{name}\"\nseed = {seed}\nstarts = {starts}\nmethods = [\"w\", \"aw\"]\n\
         [[grid]]\nrule = [2, 1]\ndims = [2]\nn = [{}]\n",
        ns.join(", ")
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_knight_spec_parses_to_what_it_says() {
        let sweep = crate::Sweep::parse(&super::knight_spec("t", 1, 4, &[5, 6])).unwrap();
        assert_eq!((sweep.name(), sweep.configurations().len(), sweep.total_tasks()), ("t", 2, 2 * 4 * 2));
    }
}
