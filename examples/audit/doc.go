// Command audit reads toolmw's audit log (an SQLite file or a PostgreSQL
// database written by audit/sqlstore) and prints the recent rows, newest
// first: "why did this tool fail" in one command.
//
//	go run ./examples/audit -db toolmw-audit.db
//	go run ./examples/audit -db toolmw-audit.db -tool sales_report -outcome error
//	go run ./examples/audit -postgres "$TOOLMW_AUDIT_POSTGRES" -since 1h -json
//	go run ./examples/audit -db toolmw-audit.db -table my_audit   # the server's -audit-table
package main
