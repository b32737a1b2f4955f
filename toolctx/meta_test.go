package toolctx_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/toolctx"
)

func TestUntrustedMeta(t *testing.T) {
	own := map[string]any{"trace": "t-1"}
	got := toolctx.UntrustedMeta(own)
	got["probe"] = 1
	assert.Equal(t, 1, own["probe"], "a map without reserved keys is returned as is, without a copy")
	delete(own, "probe")

	assert.Nil(t, toolctx.UntrustedMeta(nil), "nil stays nil")
	assert.Nil(t, toolctx.UntrustedMeta(map[string]any{toolctx.ReservedMetaPrefix + "protocolVersion": "2026-07-28"}),
		"a map of reserved keys only gives nil")

	mixed := map[string]any{toolctx.ReservedMetaPrefix + "clientInfo": map[string]any{"name": "c"}, "trace": "t-2"}
	got = toolctx.UntrustedMeta(mixed)
	assert.Equal(t, map[string]any{"trace": "t-2"}, got, "reserved keys are dropped, the caller's kept")
	assert.Len(t, mixed, 2, "the input map is not changed")
}

func TestDetailsMetaLeavesReservedKeysOut(t *testing.T) {
	req := &toolctx.Request{Tool: "t", Meta: map[string]any{
		toolctx.ReservedMetaPrefix + "protocolVersion": "2026-07-28",
		"trace": map[string]any{"id": "t-3"},
	}}
	d := toolctx.DetailsOf(req)
	got := d.Meta()
	assert.Equal(t, map[string]any{"trace": map[string]any{"id": "t-3"}}, got, "only the caller's own keys, deep-copied")
	got["trace"].(map[string]any)["id"] = "changed"
	assert.Equal(t, "t-3", req.Meta["trace"].(map[string]any)["id"], "the copy is deep: the request is unchanged")

	onlyReserved := toolctx.DetailsOf(&toolctx.Request{Meta: map[string]any{toolctx.ReservedMetaPrefix + "clientInfo": "c"}})
	assert.Nil(t, onlyReserved.Meta(), "nothing of the caller's own gives nil")
}
