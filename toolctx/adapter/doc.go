// Package adapter is the kit an MCP adapter is written with: everything an
// adapter must do the same way whatever the SDK under it, so that a third
// SDK (or a hand-written JSON-RPC loop, see examples/adapter) keeps toolmw's
// rule as toolctx/mcpsdk and toolctx/mcpgo do: the audit row may name the
// cause; the caller may not. docs/adapter-kit.md is its guide.
//
// An adapter is a codec around the kit. For each tools/call it decodes the
// SDK's request into a [Call]'s Request (with a [NewCallID]), and calls
// [Call.Serve] with its chain and a [Codec]: the kit runs the chain
// contained (a panic or a runtime.Goexit anywhere in it ends the call as an
// internal failure, logged with its stack, and never the SDK's goroutine),
// gives the chain a [toolctx.Notifier] that sends nothing once the call has
// ended, checks the chain's result with the codec before the chain's hooks
// record it ([Sendable]) and again before it is sent (one encoding serves
// both), and answers a cancelled call with a content-free canceled result.
// What the codec does is the SDK's part: call the SDK's next handler for a
// native tool (through [Native]), encode a [toolctx.CallResult] as the SDK
// sends it ([Encode], [EncodeValue], [EncodeMeta], [Plain], [ErrorMeta]),
// and send notifications.
//
// The options every adapter takes are declared here ([WithTransport],
// [WithNormalizer], [WithFallbackLogger], [WithVisibility], resolved by
// [NewConfig]); the adapters re-export them. For the SDKs that need them,
// [Tasks] links a task's execution to its id and [Marks] tells the calls
// that entered the middleware from those the SDK rejected before it;
// [SchemaCache] keeps what an adapter compiled of its tools' schemas; and a
// [FrameGuard], given how the SDK decodes a frame ([FrameCodec]), answers
// a message the SDK could not decode with a fixed error instead of the
// decoder's text, in a hook of the SDK's, in front of its HTTP handler, or
// on a newline-delimited stream such as stdio ([FrameGuard.Stream]).
//
// The kit imports toolctx and errs, never an SDK.
package adapter
