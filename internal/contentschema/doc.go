// Package contentschema checks a tool result's content blocks against the
// protocol's schema for them (ContentBlock in the MCP schema of
// 2025-11-25, schema/2025-11-25/schema.json in
// github.com/modelcontextprotocol/modelcontextprotocol): the adapters'
// tests use it to show that what an SDK would send is not readable, and
// that what toolmw sends is. Tests only.
package contentschema
