// Debian's SQLite (libsqlite3-dev): the library the SQLite store calls through `SQLiteHandle`.
//
// SQLiteNIO's own copy of SQLite (module VaporCSQLite, a newer version, its functions prefixed sqlite_nio_) is in the
// same build, for SQLiteKit's types, and a Swift module that sees both headers refuses two different definitions of
// one C struct. These are the structs whose members differ between the two versions, and those that point to one
// (a virtual table names its module, a cursor its table); Sesame uses none of them, and here they get names of
// their own. A struct that differs after either library is updated fails the build the same
// way (`'X::member' from module 'VaporCSQLite' is not present in definition of 'struct X'`): add it here.
#define sqlite3_module sesame_system_sqlite3_module
#define sqlite3_vtab sesame_system_sqlite3_vtab
#define sqlite3_vtab_cursor sesame_system_sqlite3_vtab_cursor
#define Fts5ExtensionApi sesame_system_Fts5ExtensionApi
#define fts5_api sesame_system_fts5_api
#include <sqlite3.h>

// What Swift cannot call: sqlite3_config and sqlite3_db_config are variadic.

// Turns off SQLite's memory statistics, which take a global mutex around every allocation; the store never reads
// them. Only before SQLite initialises (the first open): later it returns SQLITE_MISUSE and changes nothing.
static inline int sesame_sqlite3_disable_memstatus(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

// Double-quoted string literals refused in statements and schema (SQLITE_DBCONFIG_DQS_DML, _DDL off), as SQLite
// advises: "name" is always an identifier, a misspelt column an error instead of a string.
static inline int sesame_sqlite3_refuse_quoted_literals(sqlite3 *db) {
    int code = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (code != SQLITE_OK) return code;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
