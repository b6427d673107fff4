//! Task identities as stored (docs/identity.md): each configuration and
//! method identity once, and which of them a sweep's indices are.

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};
use sweep::Sweep;

/// Records the identities of `sweep`'s configurations and methods, stored
/// under key `sweep_key`, adding any the database lacks.
pub(super) fn register(conn: &Connection, sweep_key: i64, sweep: &Sweep) -> rusqlite::Result<()> {
    let mut config = conn.prepare_cached(
        "INSERT INTO configs (identity, cells, moves) VALUES (?1, ?2, ?3)
         ON CONFLICT (identity) DO UPDATE SET cells = excluded.cells RETURNING key",
    )?;
    let mut of_sweep =
        conn.prepare_cached("INSERT INTO sweep_configs (sweep, config, config_key) VALUES (?1, ?2, ?3)")?;
    for (index, entry) in sweep.configurations().iter().enumerate() {
        let key: i64 =
            config.query_row(params![entry.identity(), entry.cells() as i64, entry.move_count()], |r| r.get(0))?;
        of_sweep.execute(params![sweep_key, index as i64, key])?;
    }
    let mut method = conn.prepare_cached(
        "INSERT INTO methods (identity, name) VALUES (?1, ?2)
         ON CONFLICT (identity) DO UPDATE SET name = excluded.name RETURNING key",
    )?;
    let mut of_sweep =
        conn.prepare_cached("INSERT INTO sweep_methods (sweep, method, method_key) VALUES (?1, ?2, ?3)")?;
    for (index, &m) in sweep.methods().iter().enumerate() {
        let key: i64 = method.query_row(params![sweep.method_identity(m), m.name()], |r| r.get(0))?;
        of_sweep.execute(params![sweep_key, index as i64, key])?;
    }
    Ok(())
}

/// For the upgrade to version 4 only, while the old table `results_v3`
/// exists: identities of a sweep whose spec this build cannot parse, one
/// per configuration and method index its results use, named after the
/// sweep so no other sweep ever shares them.
pub(super) fn register_unparsed(conn: &Connection, sweep_key: i64, sweep_id: &str) -> rusqlite::Result<()> {
    for (column, table, of_sweep) in [
        ("config", "configs (identity, cells, moves) VALUES (?1, 0, 0)", "sweep_configs (sweep, config, config_key)"),
        ("method", "methods (identity, name) VALUES (?1, '')", "sweep_methods (sweep, method, method_key)"),
    ] {
        let indices: Vec<i64> = conn
            .prepare(&format!("SELECT DISTINCT {column} FROM results_v3 WHERE sweep = ?1"))?
            .query_map([sweep_key], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for index in indices {
            conn.execute(&format!("INSERT INTO {table}"), [format!("unparsed sweep {sweep_id} {column} {index}")])?;
            let key = conn.last_insert_rowid();
            conn.execute(&format!("INSERT INTO {of_sweep} VALUES (?1, ?2, ?3)"), params![sweep_key, index, key])?;
        }
    }
    Ok(())
}

/// The identity keys of a sweep's configuration and method indices, looked
/// up once per batch of results.
#[derive(Default)]
pub(super) struct KeyCache {
    configs: HashMap<(i64, u32), i64>,
    methods: HashMap<(i64, u32), i64>,
}

impl KeyCache {
    /// The keys of (configuration, method) of sweep `sweep_key`; None for
    /// an index the sweep does not have.
    pub(super) fn keys(
        &mut self,
        conn: &Connection,
        sweep_key: i64,
        config: u32,
        method: u32,
    ) -> rusqlite::Result<Option<(i64, i64)>> {
        let c = cached(
            &mut self.configs,
            conn,
            "SELECT config_key FROM sweep_configs WHERE sweep = ?1 AND config = ?2",
            (sweep_key, config),
        )?;
        let m = cached(
            &mut self.methods,
            conn,
            "SELECT method_key FROM sweep_methods WHERE sweep = ?1 AND method = ?2",
            (sweep_key, method),
        )?;
        Ok(c.zip(m))
    }
}

fn cached(
    map: &mut HashMap<(i64, u32), i64>,
    conn: &Connection,
    sql: &str,
    at: (i64, u32),
) -> rusqlite::Result<Option<i64>> {
    if let Some(&key) = map.get(&at) {
        return Ok(Some(key));
    }
    let key: Option<i64> = conn.prepare_cached(sql)?.query_row(params![at.0, at.1], |r| r.get(0)).optional()?;
    if let Some(key) = key {
        map.insert(at, key);
    }
    Ok(key)
}
