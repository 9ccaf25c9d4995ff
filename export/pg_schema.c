/* The schema perf's export-to-postgresql.py (Linux 6.1) creates: its tables
 * (without keys while the rows are copied in), its views, then its primary and
 * foreign keys and indexes, in its words. Tables it drops again when empty are
 * not made (see sqlite_schema.c); cstrace_captures is cstrace's own. */
#include "pg_int.h"

#include <stddef.h>

const char *const exp_pg_tables[cst_export_ntables] = {
	[cst_export_selected_events] =
		"CREATE TABLE selected_events (id\t\tbigint\t\tNOT NULL,"
		"name\t\tvarchar(80))",
	[cst_export_machines] =
		"CREATE TABLE machines (id\t\tbigint\t\tNOT NULL,pid\t\tinteger,"
		"root_dir \tvarchar(4096))",
	[cst_export_threads] =
		"CREATE TABLE threads (id\t\tbigint\t\tNOT NULL,machine_id\tbigint,"
		"process_id\tbigint,pid\t\tinteger,tid\t\tinteger)",
	[cst_export_comms] =
		"CREATE TABLE comms (id\t\tbigint\t\tNOT NULL,comm\t\tvarchar(16),"
		"c_thread_id\tbigint,c_time\t\tbigint,exec_flag\tboolean)",
	[cst_export_comm_threads] =
		"CREATE TABLE comm_threads (id\t\tbigint\t\tNOT NULL,comm_id\tbigint,"
		"thread_id\tbigint)",
	[cst_export_dsos] =
		"CREATE TABLE dsos (id\t\tbigint\t\tNOT NULL,machine_id\tbigint,"
		"short_name\tvarchar(256),long_name\tvarchar(4096),build_id\tvarchar(64))",
	[cst_export_symbols] =
		"CREATE TABLE symbols (id\t\tbigint\t\tNOT NULL,dso_id\t\tbigint,"
		"sym_start\tbigint,sym_end\tbigint,binding\tinteger,name\t\tvarchar(2048))",
	[cst_export_branch_types_table] =
		"CREATE TABLE branch_types (id\t\tinteger\t\tNOT NULL,name\t\tvarchar(80))",
	[cst_export_samples] =
		"CREATE TABLE samples (id\t\tbigint\t\tNOT NULL,evsel_id\tbigint,"
		"machine_id\tbigint,thread_id\tbigint,comm_id\tbigint,dso_id\t\tbigint,"
		"symbol_id\tbigint,sym_offset\tbigint,ip\t\tbigint,time\t\tbigint,"
		"cpu\t\tinteger,to_dso_id\tbigint,to_symbol_id\tbigint,"
		"to_sym_offset\tbigint,to_ip\t\tbigint,branch_type\tinteger,"
		"in_tx\t\tboolean,call_path_id\tbigint,insn_count\tbigint,"
		"cyc_count\tbigint,flags\t\tinteger)",
	[cst_export_call_paths] =
		"CREATE TABLE call_paths (id\t\tbigint\t\tNOT NULL,parent_id\tbigint,"
		"symbol_id\tbigint,ip\t\tbigint)",
	[cst_export_calls] =
		"CREATE TABLE calls (id\t\tbigint\t\tNOT NULL,thread_id\tbigint,"
		"comm_id\tbigint,call_path_id\tbigint,call_time\tbigint,"
		"return_time\tbigint,branch_count\tbigint,call_id\tbigint,"
		"return_id\tbigint,parent_call_path_id\tbigint,flags\t\tinteger,"
		"parent_id\tbigint,insn_count\tbigint,cyc_count\tbigint)",
	[cst_export_captures] =
		"CREATE TABLE cstrace_captures (machine_id\tbigint,path\tvarchar(4096),"
		"tool\tvarchar(80),samples\tbigint,calls\tbigint)",
};

const char exp_pg_samples_all[] =
	"CREATE TABLE samples (id\t\tbigint\t\tNOT NULL,evsel_id\tbigint,"
	"machine_id\tbigint,thread_id\tbigint,comm_id\tbigint,dso_id\t\tbigint,"
	"symbol_id\tbigint,sym_offset\tbigint,ip\t\tbigint,time\t\tbigint,"
	"cpu\t\tinteger,to_dso_id\tbigint,to_symbol_id\tbigint,"
	"to_sym_offset\tbigint,to_ip\t\tbigint,period\t\tbigint,weight\t\tbigint,"
	"transaction\tbigint,data_src\tbigint,branch_type\tinteger,"
	"in_tx\t\tboolean,call_path_id\tbigint,insn_count\tbigint,"
	"cyc_count\tbigint,flags\t\tinteger)";

/* the views in perf's order (call_paths_view and calls_view need the calls tables) */
const char *const exp_pg_views[] = {
	EXP_VIEWS_SHARED
	/* call_paths_view */
	"CREATE VIEW call_paths_view AS SELECT c.id,to_hex(c.ip) AS ip,c.symbol_id,"
	"(SELECT name FROM symbols WHERE id = c.symbol_id) AS symbol,"
	"(SELECT dso_id FROM symbols WHERE id = c.symbol_id) AS dso_id,"
	"(SELECT dso FROM symbols_view  WHERE id = c.symbol_id) AS dso_short_name,"
	"c.parent_id,to_hex(p.ip) AS parent_ip,p.symbol_id AS parent_symbol_id,"
	"(SELECT name FROM symbols WHERE id = p.symbol_id) AS parent_symbol,"
	"(SELECT dso_id FROM symbols WHERE id = p.symbol_id) AS parent_dso_id,"
	"(SELECT dso FROM symbols_view  WHERE id = p.symbol_id) AS parent_dso_short_name FROM call_paths c INNER JOIN call_paths p ON p.id = c.parent_id",
	/* calls_view */
	"CREATE VIEW calls_view AS SELECT calls.id,thread_id,"
	"(SELECT pid FROM threads WHERE id = thread_id) AS pid,"
	"(SELECT tid FROM threads WHERE id = thread_id) AS tid,"
	"(SELECT comm FROM comms WHERE id = comm_id) AS command,call_path_id,"
	"to_hex(ip) AS ip,symbol_id,"
	"(SELECT name FROM symbols WHERE id = symbol_id) AS symbol,call_time,"
	"return_time,return_time - call_time AS elapsed_time,branch_count,"
	"insn_count,cyc_count,CASE WHEN cyc_count=0 THEN CAST(0 AS NUMERIC(20,"
	" 2)) ELSE CAST((CAST(insn_count AS FLOAT) / cyc_count) AS NUMERIC(20,"
	" 2)) END AS IPC,call_id,return_id,"
	"CASE WHEN flags=0 THEN '' WHEN flags=1 THEN 'no call' WHEN flags=2 THEN 'no return' WHEN flags=3 THEN 'no call/return' WHEN flags=6 THEN 'jump' ELSE CAST ( flags AS VARCHAR(6) ) END AS flags,"
	"parent_call_path_id,"
	"calls.parent_id FROM calls INNER JOIN call_paths ON call_paths.id = call_path_id",
	/* samples_view */
	"CREATE VIEW samples_view AS SELECT id,time,cpu,"
	"(SELECT pid FROM threads WHERE id = thread_id) AS pid,"
	"(SELECT tid FROM threads WHERE id = thread_id) AS tid,"
	"(SELECT comm FROM comms WHERE id = comm_id) AS command,"
	"(SELECT name FROM selected_events WHERE id = evsel_id) AS event,"
	"to_hex(ip) AS ip_hex,"
	"(SELECT name FROM symbols WHERE id = symbol_id) AS symbol,sym_offset,"
	"(SELECT short_name FROM dsos WHERE id = dso_id) AS dso_short_name,"
	"to_hex(to_ip) AS to_ip_hex,"
	"(SELECT name FROM symbols WHERE id = to_symbol_id) AS to_symbol,"
	"to_sym_offset,"
	"(SELECT short_name FROM dsos WHERE id = to_dso_id) AS to_dso_short_name,"
	"(SELECT name FROM branch_types WHERE id = branch_type) AS branch_type_name,"
	"in_tx,insn_count,cyc_count,"
	"CASE WHEN cyc_count=0 THEN CAST(0 AS NUMERIC(20,"
	" 2)) ELSE CAST((CAST(insn_count AS FLOAT) / cyc_count) AS NUMERIC(20,"
	" 2)) END AS IPC,flags FROM samples",
	NULL,
};

/* primary keys, per table (perf adds them after the copy) */
const char *const exp_pg_keys[cst_export_ntables] = {
	[cst_export_selected_events] = "ALTER TABLE selected_events ADD PRIMARY KEY (id)",
	[cst_export_machines] = "ALTER TABLE machines        ADD PRIMARY KEY (id)",
	[cst_export_threads] = "ALTER TABLE threads         ADD PRIMARY KEY (id)",
	[cst_export_comms] = "ALTER TABLE comms           ADD PRIMARY KEY (id)",
	[cst_export_comm_threads] = "ALTER TABLE comm_threads    ADD PRIMARY KEY (id)",
	[cst_export_dsos] = "ALTER TABLE dsos            ADD PRIMARY KEY (id)",
	[cst_export_symbols] = "ALTER TABLE symbols         ADD PRIMARY KEY (id)",
	[cst_export_branch_types_table] = "ALTER TABLE branch_types    ADD PRIMARY KEY (id)",
	[cst_export_samples] = "ALTER TABLE samples         ADD PRIMARY KEY (id)",
	[cst_export_call_paths] = "ALTER TABLE call_paths      ADD PRIMARY KEY (id)",
	[cst_export_calls] = "ALTER TABLE calls           ADD PRIMARY KEY (id)",
};

/* foreign keys (those of the calls tables last) */
const char *const exp_pg_foreign[] = {
	"ALTER TABLE threads ADD CONSTRAINT machinefk  FOREIGN KEY (machine_id)   REFERENCES machines   (id),"
	"ADD CONSTRAINT processfk  FOREIGN KEY (process_id)   REFERENCES threads    (id)",
	"ALTER TABLE comms ADD CONSTRAINT threadfk   FOREIGN KEY (c_thread_id)  REFERENCES threads    (id)",
	"ALTER TABLE comm_threads ADD CONSTRAINT commfk     FOREIGN KEY (comm_id)      REFERENCES comms      (id),"
	"ADD CONSTRAINT threadfk   FOREIGN KEY (thread_id)    REFERENCES threads    (id)",
	"ALTER TABLE dsos ADD CONSTRAINT machinefk  FOREIGN KEY (machine_id)   REFERENCES machines   (id)",
	"ALTER TABLE symbols ADD CONSTRAINT dsofk      FOREIGN KEY (dso_id)       REFERENCES dsos       (id)",
	"ALTER TABLE samples ADD CONSTRAINT evselfk    FOREIGN KEY (evsel_id)     REFERENCES selected_events (id),"
	"ADD CONSTRAINT machinefk  FOREIGN KEY (machine_id)   REFERENCES machines   (id),"
	"ADD CONSTRAINT threadfk   FOREIGN KEY (thread_id)    REFERENCES threads    (id),"
	"ADD CONSTRAINT commfk     FOREIGN KEY (comm_id)      REFERENCES comms      (id),"
	"ADD CONSTRAINT dsofk      FOREIGN KEY (dso_id)       REFERENCES dsos       (id),"
	"ADD CONSTRAINT symbolfk   FOREIGN KEY (symbol_id)    REFERENCES symbols    (id),"
	"ADD CONSTRAINT todsofk    FOREIGN KEY (to_dso_id)    REFERENCES dsos       (id),"
	"ADD CONSTRAINT tosymbolfk FOREIGN KEY (to_symbol_id) REFERENCES symbols    (id)",
	"ALTER TABLE call_paths ADD CONSTRAINT parentfk    FOREIGN KEY (parent_id)    REFERENCES call_paths (id),"
	"ADD CONSTRAINT symbolfk    FOREIGN KEY (symbol_id)    REFERENCES symbols    (id)",
	"ALTER TABLE calls ADD CONSTRAINT threadfk    FOREIGN KEY (thread_id)    REFERENCES threads    (id),"
	"ADD CONSTRAINT commfk      FOREIGN KEY (comm_id)      REFERENCES comms      (id),"
	"ADD CONSTRAINT call_pathfk FOREIGN KEY (call_path_id) REFERENCES call_paths (id),"
	"ADD CONSTRAINT callfk      FOREIGN KEY (call_id)      REFERENCES samples    (id),"
	"ADD CONSTRAINT returnfk    FOREIGN KEY (return_id)    REFERENCES samples    (id),"
	"ADD CONSTRAINT parent_call_pathfk FOREIGN KEY (parent_call_path_id) REFERENCES call_paths (id)",
	NULL,
};
