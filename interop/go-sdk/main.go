// A small MCP server on the official Go SDK (github.com/modelcontextprotocol/go-sdk),
// for the mcp-fleet interop suite: the same surface as interop/python_server.py.
//
//	go-sdk-server stdio
//	go-sdk-server http PORT [--stateless] [--json] [--page-size N] [--session-timeout D]
//	go-sdk-server sse PORT
//
// HTTP transports listen on 127.0.0.1 only (Streamable HTTP on /mcp, legacy SSE on /sse).
// Tools `echo(message)`, `add(a, b)` and `roots` (asks the client for roots/list when it
// declared roots: a server→client request after a tool call); prompt `greeting(name)`;
// resource `fleet://info` and template `fleet://items/{item_id}`.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const sdkVersion = "v1.8.0" // pinned in go.mod; said in serverInfo

type echoArgs struct {
	Message string `json:"message" jsonschema:"the message to echo back"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"a number"`
	B float64 `json:"b" jsonschema:"another number"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func build(pageSize int) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "fleet-interop-go-sdk", Version: sdkVersion},
		&mcp.ServerOptions{PageSize: pageSize})

	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echo the message back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return text("Echo: " + in.Message), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "roots", Description: "List the client's roots (roots/list) when it declared them."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			params := req.Session.InitializeParams()
			if params == nil || params.Capabilities == nil || params.Capabilities.RootsV2 == nil {
				return text("no roots capability"), nil, nil
			}
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("roots/list failed: %w", err)
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text("roots: " + strings.Join(uris, ",")), nil, nil
		})

	server.AddPrompt(&mcp.Prompt{Name: "greeting", Description: "Greet someone by name.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "Please greet " + req.Params.Arguments["name"] + " warmly."}}}}, nil
		})
	server.AddResource(&mcp.Resource{Name: "info", URI: "fleet://info", MIMEType: "text/plain",
		Description: "What this server is."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI,
				MIMEType: "text/plain", Text: "fleet-interop-go-sdk on go-sdk " + sdkVersion}}}, nil
		})
	server.AddResourceTemplate(&mcp.ResourceTemplate{Name: "item", URITemplate: "fleet://items/{item_id}",
		MIMEType: "text/plain", Description: "One item, by id."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "fleet://items/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI,
				MIMEType: "text/plain", Text: "item " + id}}}, nil
		})
	return server
}

func listen(port string, handler http.Handler) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.Serve(ln, handler))
}

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: go-sdk-server stdio | http PORT [--stateless] [--json] [--page-size N] [--session-timeout D] | sse PORT")
	}
	mode := os.Args[1]
	flags := flag.NewFlagSet(mode, flag.ExitOnError)
	stateless := flags.Bool("stateless", false, "Streamable HTTP without sessions (serves 2026-07-28)")
	jsonResponse := flags.Bool("json", false, "answer POSTs with application/json, not SSE")
	pageSize := flags.Int("page-size", 0, "items per list page (0: the SDK's default)")
	sessionTimeout := flags.Duration("session-timeout", 0, "forget sessions idle this long (0: never)")
	port := ""
	args := os.Args[2:]
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		port, args = args[0], args[1:]
	}
	_ = flags.Parse(args)
	server := build(*pageSize)

	switch mode {
	case "stdio":
		if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Printf("server: %v", err)
		}
	case "http":
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
			&mcp.StreamableHTTPOptions{Stateless: *stateless, JSONResponse: *jsonResponse,
				SessionTimeout: *sessionTimeout}))
		listen(port, mux)
	case "sse":
		mux := http.NewServeMux()
		mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil))
		listen(port, mux)
	default:
		log.Fatalf("unknown mode %q", mode)
	}
}
