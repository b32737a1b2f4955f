// Package docs holds no code: it is the home of toolmw's documentation pages
// (the Markdown files beside this one) and of the test that keeps every Go
// block in them, and in the README, compiled.
//
// Each ```go block in README.md and docs/**/*.md is preceded by a line
//
//	<!-- code: PATH#NAME -->
//
// naming the Go source the block is copied from: PATH is a file of this
// module, relative to its root; NAME is a function in it (the block is the
// function's body) or a region marked in it by the comment lines
// "// doc:begin NAME" and "// doc:end NAME". The build compiles that source
// (go vet and go test compile every file of the module), and TestCodeBlocks
// fails when a block differs from it, so a block that would no longer build
// fails the build, and a block edited by hand fails the test. After a change
// of the sources, "go test ./docs -run TestCodeBlocks -update" copies them into
// the blocks.
package docs
