// Package newcomer holds the newcomer test: it runs README.md as a new
// user would, from a fresh clone of the checkout, and fails when a quoted
// output line no longer matches what the command prints.
//
// The package has no code of its own. The convention README.md's blocks
// follow is in newcomer_test.go:
//
//   - the first ```sh block holds the two commands: the demo server, which
//     the test starts, waits for and stops with SIGINT, and the test
//     command, which must be the one .ci/run runs;
//   - every ```console block is run, unless the line before its fence is
//     <!-- newcomer: skip -->: a line "$ cmd" is run with bash from the
//     clone's root, the lines after it are its expected output, in which
//     "…" matches any run of characters and a line that is only "…" any
//     number of lines;
//   - a command ending in " &" runs in the background until the last block
//     is done, then gets SIGINT and its whole output is checked;
//   - 127.0.0.1:8080 is replaced by a free port on 127.0.0.1.
package newcomer
