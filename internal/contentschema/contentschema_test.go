package contentschema

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{
		`[]`,
		`[{"type":"text","text":""}]`,
		`[{"type":"image","data":"","mimeType":"image/png"}]`,
		`[{"type":"resource_link","uri":"file:///a","name":"a"}]`,
		`[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]`,
		`[{"type":"resource","resource":{"uri":"file:///a","blob":"eA=="}}]`,
	} {
		assert.NoError(t, Check([]byte(ok)), ok)
	}
	for _, bad := range []string{
		`[null]`,
		`[{"text":"x"}]`,
		`[{"type":"","text":"x"}]`,
		`[{"type":"image","text":"x"}]`,
		`[{"type":"resource_link"}]`,
		`[{"type":"resource_link","uri":"","name":"a"}]`,
		`[{"type":"resource"}]`,
		`[{"type":"resource","resource":{"uri":"file:///a"}}]`,
		`[{"type":"tool_use","id":"1","name":"f","input":{}}]`,
	} {
		assert.Error(t, Check([]byte(bad)), bad)
	}
	assert.Error(t, CheckResult([]byte(`{"isError":true}`)), "a result without content")
}
