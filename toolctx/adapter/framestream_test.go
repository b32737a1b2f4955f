package adapter_test

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolmw/toolmw/toolctx/adapter"
)

// stream is a guarded stream over in, with what the SDK read and what was
// written to the peer.
func stream(t *testing.T, in string, maxLine int) (sdk io.ReadCloser, w io.WriteCloser, peer *bytes.Buffer) {
	t.Helper()
	g := adapter.NewFrameGuard(&adapter.Config{Logger: slog.New(slog.DiscardHandler)}, testCodec())
	peer = new(bytes.Buffer)
	sdk, w = g.Stream(strings.NewReader(in), peer, maxLine)
	return sdk, w, peer
}

// The stream hands the SDK the lines it decodes, as they came (white
// space and all), and answers the others on the writer.
func TestStreamPassesAndAnswers(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}` + "\n" +
		"\n" +
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":5}}` + "\n" +
		` [{"jsonrpc":"2.0","id":3,"method":"ping"}] ` + "\r\n" +
		`not json` + "\n" +
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`
	sdk, _, peer := stream(t, in, 0)
	got, err := io.ReadAll(sdk)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+` [{"jsonrpc":"2.0","id":3,"method":"ping"}] `+"\r\n"+`{"jsonrpc":"2.0","id":4,"method":"ping"}`, string(got))
	assert.Equal(t,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid request: its params do not match the method's"}}`+"\n"+
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid JSON"}}`+"\n",
		peer.String(), "one answer per request refused, none for the notification")
}

func TestStreamLineTooLong(t *testing.T) {
	sdk, _, _ := stream(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"`+strings.Repeat("a", 100)+`"}}`+"\n", 64)
	got, err := io.ReadAll(sdk)
	assert.ErrorIs(t, err, adapter.ErrLineTooLong)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", string(got), "the lines before it pass")
}

// A batch on a session whose server answered initialize with 2025-06-18 or
// later is refused (that version has no batches); on an older session, or
// before the answer, it passes. Fails when the stream learns no version.
func TestStreamRefusesBatchesFromProtocol20250618(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`
	for _, tc := range []struct {
		version string
		refused bool
	}{{"2025-03-26", false}, {"2025-06-18", true}, {"2025-11-25", true}} {
		t.Run(tc.version, func(t *testing.T) {
			r, w := io.Pipe()
			g := adapter.NewFrameGuard(&adapter.Config{Logger: slog.New(slog.DiscardHandler)}, testCodec())
			var peer bytes.Buffer
			sdk, out := g.Stream(r, &peer, 0)
			go func() {
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`+"\n"+batch+"\n")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":9,"method":"ping"}`+"\n")
				_ = w.Close()
			}()
			buf := make([]byte, 4096)
			n, err := sdk.Read(buf)
			require.NoError(t, err)
			require.Contains(t, string(buf[:n]), `"initialize"`)
			// The SDK answers initialize; the guard reads on only after.
			_, err = io.WriteString(out, `{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"`+tc.version+`","capabilities":{}}}`+"\n")
			require.NoError(t, err)
			rest, err := io.ReadAll(sdk)
			require.NoError(t, err)
			assert.Contains(t, string(rest), `"id":9`, "the session goes on")
			if tc.refused {
				assert.NotContains(t, string(rest), batch, "the SDK never reads the batch")
				assert.Contains(t, peer.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"`+adapter.MsgFrameBatch+`"}}`)
			} else {
				assert.Contains(t, string(rest), batch, "an older session has batches")
				assert.NotContains(t, peer.String(), `"error"`)
			}
		})
	}
	sdk, _, peer := stream(t, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}`+"\n"+batch+"\n", 0)
	got, err := io.ReadAll(sdk)
	require.NoError(t, err)
	assert.Contains(t, string(got), batch, "before the server has answered initialize, the version is not known")
	assert.Empty(t, peer.String())
}

// The net under the guard on a stream: an error carrying a decoder's
// text, which the guard did not foresee, leaves with the fixed message and
// the SDK's code (0: -32602); anything else leaves as it is, undecoded.
func TestStreamScrubsDecoderText(t *testing.T) {
	_, w, peer := stream(t, "", 0)
	leak := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"handling 'x/y': invalid params: unmarshaling \"5\" into a *mcp.XParams: json: cannot unmarshal number into Go value of type mcp.XParams"}}`
	write := func(line string) string {
		peer.Reset()
		n, err := w.Write([]byte(line + "\n"))
		require.NoError(t, err)
		require.Equal(t, len(line)+1, n, "the whole write is reported written")
		return peer.String()
	}
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid request: its params do not match the method's"}}`, write(leak))
	got := write("[" + leak + `,{"jsonrpc":"2.0","id":2,"result":{}}]`)
	assert.NotContains(t, got, "unmarshal")
	assert.Contains(t, got, `"result":{}`)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid request: its params do not match the method's"}}`,
		write(`{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":"json: cannot unmarshal"}}`), "code 0 is invalid params")
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"error: json: fine in a result"}]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`,
	} {
		assert.Equal(t, line+"\n", write(line))
	}
}

func TestScrubError(t *testing.T) {
	code, msg, changed := adapter.ScrubError(-32603, `unmarshaling "x" into a *mcp.X: json: cannot unmarshal`)
	assert.True(t, changed)
	assert.Equal(t, int64(-32603), code, "the SDK's code is kept")
	assert.Equal(t, adapter.MsgFrameParams, msg)
	code, msg, changed = adapter.ScrubError(-32601, "method not found")
	assert.False(t, changed)
	assert.Equal(t, int64(-32601), code)
	assert.Equal(t, "method not found", msg)
}

// Closing the stream closes what it reads and writes, when they close.
func TestStreamCloses(t *testing.T) {
	g := adapter.NewFrameGuard(nil, testCodec())
	r, w := &closer{Reader: strings.NewReader("")}, &closer{}
	sdk, out := g.Stream(r, w, 0)
	require.NoError(t, sdk.Close())
	require.NoError(t, out.Close())
	assert.True(t, r.closed)
	assert.True(t, w.closed)
	sdk, out = g.Stream(strings.NewReader(""), io.Discard, 0)
	assert.NoError(t, sdk.Close(), "a reader that does not close")
	assert.NoError(t, out.Close(), "a writer that does not close")
}

type closer struct {
	io.Reader
	bytes.Buffer
	closed bool
}

func (c *closer) Read(p []byte) (int, error) { return c.Reader.Read(p) }
func (c *closer) Close() error               { c.closed = true; return nil }

// blockingWriter blocks every Write until release is closed, after saying
// it entered.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.entered <- struct{}{}
	<-b.release
	return len(p), nil
}

// The reader never waits for a write: while the server's write is blocked
// (a peer that writes before it reads), the stream still hands the SDK its
// lines, batches included (whose check asks the session's version).
func TestStreamReadsWhileAWriteBlocks(t *testing.T) {
	g := adapter.NewFrameGuard(&adapter.Config{Logger: slog.New(slog.DiscardHandler)}, testCodec())
	bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	sdk, out := g.Stream(strings.NewReader(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`+"\n"), bw, 0)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		_, _ = out.Write([]byte(`{"jsonrpc":"2.0","id":0,"result":{}}` + "\n"))
	}()
	<-bw.entered // the write holds the stream's writer
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(sdk)
		read <- b
	}()
	select {
	case b := <-read:
		assert.Contains(t, string(b), `"method":"ping"`)
	case <-time.After(10 * time.Second): // a bound on a broken test, not a measure
		t.Error("the reader waited for the blocked write")
	}
	close(bw.release)
	<-wrote
}
