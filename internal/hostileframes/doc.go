// Package hostileframes holds the raw JSON-RPC frames a hostile MCP client
// sends, for the tests of both adapters' frame guards: envelopes an SDK
// cannot decode, params of every wrong shape, and Go's vocabulary, which no
// byte a client receives may hold. It has no code of toolmw's.
package hostileframes
