package toolctx_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolmw/toolmw/toolctx"
)

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
