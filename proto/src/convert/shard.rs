//! Boards and shards: the work a coordinator leases, decoded and checked
//! against its board by the worker; and a registration's provenance.

use sweep::{ConfigEntry, MoveSpec, Sweep};
use tour::{Board, Configuration, Method, Moves};

use super::ConvertError;
use crate::v1 as pb;

/// The board configuration message of a sweep's configuration, with the
/// sweep's cell limit (`max_cells`).
pub fn board_config(entry: &ConfigEntry, max_cells: u64) -> pb::BoardConfig {
    let (rule, moves_flat) = match &entry.moves {
        MoveSpec::Rule(rule) => (rule.clone(), Vec::new()),
        MoveSpec::List(list) => (Vec::new(), list.iter().flatten().copied().collect()),
    };
    pb::BoardConfig { sides: entry.sides.clone(), rule, moves_flat, max_cells }
}

impl TryFrom<&pb::BoardConfig> for Configuration {
    type Error = ConvertError;

    /// The engine's configuration; `max_cells` 0 is the engine's default.
    fn try_from(c: &pb::BoardConfig) -> Result<Configuration, ConvertError> {
        let max_cells = if c.max_cells == 0 { tour::DEFAULT_MAX_CELLS } else { c.max_cells };
        let board = Board::with_max_cells(&c.sides, max_cells)
            .map_err(|error| ConvertError::Engine { field: "BoardConfig.sides", error })?;
        let dims = board.dims();
        let moves = match (c.rule.is_empty(), c.moves_flat.is_empty()) {
            (false, false) => {
                return Err(ConvertError::Invalid {
                    field: "BoardConfig.rule",
                    why: "a rule and a move list (moves_flat) are both set; send one".into(),
                })
            }
            (false, true) => Moves::from_rule(&c.rule, dims)
                .map_err(|error| ConvertError::Engine { field: "BoardConfig.rule", error })?,
            (true, _) => {
                if !c.moves_flat.len().is_multiple_of(dims) {
                    return Err(ConvertError::Invalid {
                        field: "BoardConfig.moves_flat",
                        why: format!("{} components is not a multiple of {dims} dims", c.moves_flat.len()),
                    });
                }
                let list: Vec<Vec<i64>> = c.moves_flat.chunks(dims).map(<[i64]>::to_vec).collect();
                Moves::explicit(&list, dims)
                    .map_err(|error| ConvertError::Engine { field: "BoardConfig.moves_flat", error })?
            }
        };
        Configuration::new(board, moves).map_err(|error| ConvertError::Engine { field: "BoardConfig", error })
    }
}

// ------------------------------------------------------------------ shards

/// The message for a shard of `sweep`: lease (`shard_id`, `epoch`), the
/// configuration `entry`, the methods it runs (the sweep's, less those the
/// configuration took from stored results) and its start cells in order.
pub fn shard(
    shard_id: u64,
    epoch: u64,
    sweep_id: &str,
    sweep: &Sweep,
    entry: &ConfigEntry,
    methods: &[Method],
    starts: &[u64],
) -> pb::Shard {
    pb::Shard {
        shard_id,
        epoch,
        sweep_id: sweep_id.to_string(),
        sweep_seed: sweep.seed(),
        config: Some(board_config(entry, sweep.limits().max_cells)),
        methods: methods.iter().map(|m| m.name().to_string()).collect(),
        starts: starts.to_vec(),
        budget: sweep.budget(),
        iterations: sweep.iterations(),
        closed: sweep.closed(),
    }
}

/// What a shard asks a worker to run, decoded and checked against its board.
#[derive(Debug)]
pub struct ShardWork {
    pub configuration: Configuration,
    pub methods: Vec<Method>,
    /// Start cells, each on the board.
    pub starts: Vec<u64>,
    pub sweep_seed: u64,
    /// Node budget of `bt` (the engine's default when the message says 0).
    pub budget: u64,
    /// Iteration cap of `nn` (the engine's default when the message says 0).
    pub iterations: u32,
    /// Closed tours asked of solve and bt.
    pub closed: bool,
}

impl ShardWork {
    /// The options of one of the shard's tasks, with its task seed.
    pub fn options(&self, seed: u64) -> tour::TaskOptions {
        tour::TaskOptions {
            seed,
            record_path: false,
            budget: self.budget,
            iterations: self.iterations,
            closed: self.closed,
        }
    }
}

impl TryFrom<&pb::Shard> for ShardWork {
    type Error = ConvertError;

    fn try_from(s: &pb::Shard) -> Result<ShardWork, ConvertError> {
        let configuration =
            Configuration::try_from(s.config.as_ref().ok_or(ConvertError::Missing { field: "Shard.config" })?)?;
        let methods = s
            .methods
            .iter()
            .map(|m| m.parse::<Method>().map_err(|error| ConvertError::Engine { field: "Shard.methods", error }))
            .collect::<Result<Vec<_>, _>>()?;
        let cells = configuration.board().cells();
        if let Some(&off) = s.starts.iter().find(|&&start| start >= cells) {
            return Err(ConvertError::Invalid {
                field: "Shard.starts",
                why: format!("cell {off} is off the {} board", configuration.board()),
            });
        }
        let defaults = tour::TaskOptions::default();
        Ok(ShardWork {
            configuration,
            methods,
            starts: s.starts.clone(),
            sweep_seed: s.sweep_seed,
            budget: if s.budget == 0 { defaults.budget } else { s.budget },
            iterations: if s.iterations == 0 { defaults.iterations } else { s.iterations },
            closed: s.closed,
        })
    }
}

impl From<crate::build::Provenance> for pb::Provenance {
    fn from(p: crate::build::Provenance) -> pb::Provenance {
        pb::Provenance { version: p.version, build: p.build, host: p.host, cpu: p.cpu, features: p.features }
    }
}

/// A registration's provenance; a worker too old to send one is recorded
/// with empty texts.
impl From<pb::Provenance> for crate::build::Provenance {
    fn from(p: pb::Provenance) -> crate::build::Provenance {
        crate::build::Provenance { version: p.version, build: p.build, host: p.host, cpu: p.cpu, features: p.features }
    }
}
