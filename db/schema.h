// The SQL schema of a Granary database, version 2 (docs/history-and-catalog.md documents each
// column; version 2 added the tables servers and switches to version 1). Every figure has its unit
// in the column's name; CHECK constraints hold every writer (this library, Qt SQL in granary-gui,
// the sqlite3 shell) to values the models accept. A catalog row edited after it was added gets
// user_edited = 1 (trigger), so that seeding from a newer built-in catalog never overwrites it.
// Constant data; safe from any thread.
#pragma once

namespace granary::db {

inline constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  component TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS drives (
  name TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  kind TEXT NOT NULL DEFAULT 'nvme' CHECK (kind IN ('nvme', 'sata-ssd', 'hdd')),
  capacity_tb REAL NOT NULL DEFAULT 1 CHECK (typeof(capacity_tb) IN ('real', 'integer')
    AND capacity_tb >= 0.001 AND capacity_tb <= 1000),
  read_gbytes_per_s REAL NOT NULL DEFAULT 1 CHECK (typeof(read_gbytes_per_s) IN ('real',
    'integer') AND read_gbytes_per_s > 0 AND read_gbytes_per_s <= 10000),
  write_gbytes_per_s REAL NOT NULL DEFAULT 1 CHECK (typeof(write_gbytes_per_s) IN ('real',
    'integer') AND write_gbytes_per_s > 0 AND write_gbytes_per_s <= 10000),
  read_kiops REAL NOT NULL DEFAULT 100 CHECK (typeof(read_kiops) IN ('real', 'integer')
    AND read_kiops >= 0.001 AND read_kiops <= 100000),
  write_kiops REAL NOT NULL DEFAULT 100 CHECK (typeof(write_kiops) IN ('real', 'integer')
    AND write_kiops >= 0.001 AND write_kiops <= 100000),
  read_latency_us REAL NOT NULL DEFAULT 100 CHECK (typeof(read_latency_us) IN ('real',
    'integer') AND read_latency_us >= 0 AND read_latency_us <= 1000000),
  write_latency_us REAL NOT NULL DEFAULT 100 CHECK (typeof(write_latency_us) IN ('real',
    'integer') AND write_latency_us >= 0 AND write_latency_us <= 1000000),
  queue_depth INTEGER NOT NULL DEFAULT 0 CHECK (typeof(queue_depth) = 'integer'
    AND queue_depth BETWEEN 0 AND 65535),
  price_usd REAL NOT NULL DEFAULT 0 CHECK (typeof(price_usd) IN ('real', 'integer')
    AND price_usd >= 0),
  source TEXT NOT NULL DEFAULT '',
  builtin INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  user_edited INTEGER NOT NULL DEFAULT 1 CHECK (user_edited IN (0, 1))
);
CREATE TABLE IF NOT EXISTS nics (
  name TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  gbps REAL NOT NULL DEFAULT 100 CHECK (typeof(gbps) IN ('real', 'integer') AND gbps > 0
    AND gbps <= 100000),
  ports INTEGER NOT NULL DEFAULT 1 CHECK (typeof(ports) = 'integer' AND ports BETWEEN 1 AND 16),
  latency_us REAL NOT NULL DEFAULT 1 CHECK (typeof(latency_us) IN ('real', 'integer')
    AND latency_us >= 0 AND latency_us <= 1000000),
  price_usd REAL NOT NULL DEFAULT 0 CHECK (typeof(price_usd) IN ('real', 'integer')
    AND price_usd >= 0),
  source TEXT NOT NULL DEFAULT '',
  builtin INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  user_edited INTEGER NOT NULL DEFAULT 1 CHECK (user_edited IN (0, 1))
);
CREATE TABLE IF NOT EXISTS accelerators (
  name TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  unet3d_compute_s_per_step REAL NOT NULL DEFAULT 1 CHECK (typeof(unet3d_compute_s_per_step)
    IN ('real', 'integer') AND unet3d_compute_s_per_step > 0 AND unet3d_compute_s_per_step <= 3600),
  resnet50_compute_s_per_step REAL NOT NULL DEFAULT 1 CHECK (typeof(resnet50_compute_s_per_step)
    IN ('real', 'integer') AND resnet50_compute_s_per_step > 0
    AND resnet50_compute_s_per_step <= 3600),
  cosmoflow_compute_s_per_step REAL NOT NULL DEFAULT 1 CHECK (typeof(
    cosmoflow_compute_s_per_step) IN ('real', 'integer') AND cosmoflow_compute_s_per_step > 0
    AND cosmoflow_compute_s_per_step <= 3600),
  price_usd REAL NOT NULL DEFAULT 0 CHECK (typeof(price_usd) IN ('real', 'integer')
    AND price_usd >= 0),
  source TEXT NOT NULL DEFAULT '',
  builtin INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  user_edited INTEGER NOT NULL DEFAULT 1 CHECK (user_edited IN (0, 1))
);
CREATE TABLE IF NOT EXISTS servers (
  name TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  cpu_cores INTEGER NOT NULL DEFAULT 32 CHECK (typeof(cpu_cores) = 'integer'
    AND cpu_cores BETWEEN 1 AND 4096),
  drive_bays INTEGER NOT NULL DEFAULT 24 CHECK (typeof(drive_bays) = 'integer'
    AND drive_bays BETWEEN 1 AND 1024),
  nic_slots INTEGER NOT NULL DEFAULT 2 CHECK (typeof(nic_slots) = 'integer'
    AND nic_slots BETWEEN 1 AND 64),
  server_gbytes_per_s REAL NOT NULL DEFAULT 0 CHECK (typeof(server_gbytes_per_s) IN ('real',
    'integer') AND server_gbytes_per_s >= 0 AND server_gbytes_per_s <= 100000),
  rack_units INTEGER NOT NULL DEFAULT 2 CHECK (typeof(rack_units) = 'integer'
    AND rack_units BETWEEN 1 AND 64),
  power_watts REAL NOT NULL DEFAULT 0 CHECK (typeof(power_watts) IN ('real', 'integer')
    AND power_watts >= 0 AND power_watts <= 100000),
  price_usd REAL NOT NULL DEFAULT 0 CHECK (typeof(price_usd) IN ('real', 'integer')
    AND price_usd >= 0),
  source TEXT NOT NULL DEFAULT '',
  builtin INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  user_edited INTEGER NOT NULL DEFAULT 1 CHECK (user_edited IN (0, 1))
);
CREATE TABLE IF NOT EXISTS switches (
  name TEXT PRIMARY KEY NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  ports INTEGER NOT NULL DEFAULT 64 CHECK (typeof(ports) = 'integer'
    AND ports BETWEEN 1 AND 4096),
  port_gbps REAL NOT NULL DEFAULT 400 CHECK (typeof(port_gbps) IN ('real', 'integer')
    AND port_gbps > 0 AND port_gbps <= 100000),
  max_split INTEGER NOT NULL DEFAULT 1 CHECK (typeof(max_split) = 'integer'
    AND max_split BETWEEN 1 AND 16),
  latency_us REAL NOT NULL DEFAULT 0.5 CHECK (typeof(latency_us) IN ('real', 'integer')
    AND latency_us >= 0 AND latency_us <= 1000000),
  rack_units INTEGER NOT NULL DEFAULT 1 CHECK (typeof(rack_units) = 'integer'
    AND rack_units BETWEEN 1 AND 64),
  power_watts REAL NOT NULL DEFAULT 0 CHECK (typeof(power_watts) IN ('real', 'integer')
    AND power_watts >= 0 AND power_watts <= 100000),
  price_usd REAL NOT NULL DEFAULT 0 CHECK (typeof(price_usd) IN ('real', 'integer')
    AND price_usd >= 0),
  source TEXT NOT NULL DEFAULT '',
  builtin INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  user_edited INTEGER NOT NULL DEFAULT 1 CHECK (user_edited IN (0, 1))
);
CREATE TRIGGER IF NOT EXISTS servers_edited AFTER UPDATE ON servers WHEN OLD.user_edited = 0
  AND NEW.user_edited = 0 BEGIN UPDATE servers SET user_edited = 1 WHERE rowid = NEW.rowid; END;
CREATE TRIGGER IF NOT EXISTS switches_edited AFTER UPDATE ON switches WHEN OLD.user_edited = 0
  AND NEW.user_edited = 0 BEGIN UPDATE switches SET user_edited = 1 WHERE rowid = NEW.rowid; END;
CREATE TRIGGER IF NOT EXISTS drives_edited AFTER UPDATE ON drives WHEN OLD.user_edited = 0
  AND NEW.user_edited = 0 BEGIN UPDATE drives SET user_edited = 1 WHERE rowid = NEW.rowid; END;
CREATE TRIGGER IF NOT EXISTS nics_edited AFTER UPDATE ON nics WHEN OLD.user_edited = 0
  AND NEW.user_edited = 0 BEGIN UPDATE nics SET user_edited = 1 WHERE rowid = NEW.rowid; END;
CREATE TRIGGER IF NOT EXISTS accelerators_edited AFTER UPDATE ON accelerators
  WHEN OLD.user_edited = 0 AND NEW.user_edited = 0
  BEGIN UPDATE accelerators SET user_edited = 1 WHERE rowid = NEW.rowid; END;
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at TEXT NOT NULL,
  scenario_name TEXT NOT NULL,
  scenario_path TEXT NOT NULL,
  scenario_sha256 TEXT NOT NULL,
  seed TEXT NOT NULL,
  granary_version TEXT NOT NULL,
  granary_build TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'error', 'cancelled')),
  wall_s REAL NOT NULL,
  accelerator_utilization_mean REAL,
  read_gibps_epoch REAL,
  read_gibps_steady REAL,
  write_gibps REAL,
  iops REAL,
  expectations_passed INTEGER,
  expectations_total INTEGER,
  message TEXT NOT NULL DEFAULT '',
  scenario_json TEXT NOT NULL,
  report_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_started_at ON runs (started_at);
)sql";

}  // namespace granary::db
