package otelmw_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/toolmw/toolmw/middleware/otelmw"
	"github.com/toolmw/toolmw/toolctx"
)

// mcp.server.session.duration on go-sdk: a receiving middleware starts
// the session when its initialize handshake succeeds and ends it when the
// session closes (ServerSession.Wait returns). On stdio, pass
// toolctx.TransportStdio; on streamable HTTP (stateful only: a stateless
// server has no sessions), toolctx.TransportStreamableHTTP.
func ExampleNewSessions() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	sessions, err := otelmw.NewSessions(otelmw.WithMeterProvider(mp))
	if err != nil {
		panic(err)
	}
	ended := make(chan struct{}, 1)
	server := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1"}, nil)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "initialize" || err != nil {
				return res, err
			}
			ss, ok := req.GetSession().(*mcp.ServerSession)
			init, _ := res.(*mcp.InitializeResult)
			if ok && init != nil {
				s := sessions.Start(otelmw.SessionStart{Transport: toolctx.TransportStdio, ProtocolVersion: init.ProtocolVersion})
				go func() {
					s.End(context.Background(), otelmw.SessionEnd{Err: ss.Wait()})
					ended <- struct{}{}
				}()
			}
			return res, err
		}
	})

	// A client opens a session and closes it.
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(context.Background(), st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(context.Background(), ct,
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	_ = cs.Close()
	<-ended

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "mcp.server.session.duration" {
			p := m.Data.(metricdata.Histogram[float64]).DataPoints[0]
			v, _ := p.Attributes.Value("mcp.protocol.version")
			t, _ := p.Attributes.Value("network.transport")
			fmt.Println(m.Name, m.Unit, p.Count, v.AsString(), t.AsString())
		}
	}
	_ = mp.Shutdown(context.Background())
	// Output:
	// mcp.server.session.duration s 1 2025-11-25 pipe
}
