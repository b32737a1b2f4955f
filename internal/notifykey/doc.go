// Package notifykey is the context key under which toolctx.NotifierFrom
// finds a call's Notifier. toolctx.WithNotifier's context answers it, and
// so does the adapters' own context of a call (toolctx/adapter), which
// carries the Notifier with the call's other values in no allocation of
// its own. A context answers it with a value that is a toolctx.Notifier,
// or with toolctx's own carrier.
package notifykey
