// A small MCP server on github.com/mark3labs/mcp-go, for the mcp-fleet interop suite:
// the same surface as interop/python_server.py.
//
//	mcp-go-server stdio [--page-size N]
//	mcp-go-server http PORT [--stateful [--idle-ttl D] | --stateless] [--page-size N]
//	mcp-go-server sse PORT
//
// HTTP transports listen on 127.0.0.1 only (Streamable HTTP on /mcp, legacy SSE on /sse
// with messages on /message). Tools `echo(message)`, `add(a, b)` and `roots` (asks the
// client for its roots when it declared them: a multi round-trip input request, which
// the SDK turns into a roots/list request for a 2025-era client); prompt
// `greeting(name)`; resource `fleet://info` and template `fleet://items/{item_id}`.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const sdkVersion = "v1.2.1" // pinned in go.mod; said in serverInfo

func text(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }

// readOnly: mcp-go writes the spec's default annotations out (`destructiveHint: true`,
// `readOnlyHint: false`) on every tool not told otherwise, and mcp-fleet leaves
// destructive tools out of calls that generate arguments. These tools change nothing.
func readOnly() []mcp.ToolOption {
	return []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)}
}

// declaresRoots: the request's own capabilities (2026-07-28) or the session's (2025).
func declaresRoots(ctx context.Context, req mcp.CallToolRequest) bool {
	if caps := req.Params.Meta.ClientCapabilities(); caps != nil {
		return caps.Roots != nil
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities().Roots != nil
	}
	return false
}

func build(pageSize int) *server.MCPServer {
	opts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
	}
	if pageSize > 0 {
		opts = append(opts, server.WithPaginationLimit(pageSize))
	}
	s := server.NewMCPServer("fleet-interop-mcp-go", sdkVersion, opts...)

	s.AddTool(mcp.NewTool("echo", append(readOnly(), mcp.WithDescription("Echo the message back."),
		mcp.WithString("message", mcp.Required(), mcp.Description("the message to echo back")))...),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("Echo: " + req.GetString("message", "")), nil
		})
	s.AddTool(mcp.NewTool("add", append(readOnly(), mcp.WithDescription("Add two numbers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required()))...),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(req.GetFloat("a", 0) + req.GetFloat("b", 0))), nil
		})
	s.AddTool(mcp.NewTool("roots", append(readOnly(), mcp.WithDescription("List the client's roots when it declared them."))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if got := server.RootsResponse(req.Params.InputResponses, "roots"); got != nil {
				var uris []string
				for _, r := range got.Roots {
					uris = append(uris, r.URI)
				}
				return text("roots: " + strings.Join(uris, ",")), nil
			}
			if !declaresRoots(ctx, req) {
				return text("no roots capability"), nil
			}
			return server.NewInputRequestBuilder("").Roots("roots").ToolResult(), nil
		})

	s.AddPrompt(mcp.NewPrompt("greeting", mcp.WithPromptDescription("Greet someone by name."),
		mcp.WithArgument("name", mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("greeting", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Please greet "+req.Params.Arguments["name"]+" warmly.")),
			}), nil
		})
	s.AddResource(mcp.NewResource("fleet://info", "info", mcp.WithResourceDescription("What this server is."),
		mcp.WithMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain",
				Text: "fleet-interop-mcp-go on mcp-go " + sdkVersion}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate("fleet://items/{item_id}", "item",
		mcp.WithTemplateDescription("One item, by id."), mcp.WithTemplateMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := strings.TrimPrefix(req.Params.URI, "fleet://items/")
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain",
				Text: "item " + id}}, nil
		})
	return s
}

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: mcp-go-server stdio | http PORT [--stateful|--stateless] [--page-size N] | sse PORT")
	}
	mode := os.Args[1]
	flags := flag.NewFlagSet(mode, flag.ExitOnError)
	stateful := flags.Bool("stateful", false, "validate session ids (404 for unknown ones)")
	stateless := flags.Bool("stateless", false, "issue no session ids")
	pageSize := flags.Int("page-size", 0, "items per list page (0: no pagination)")
	idleTTL := flags.Duration("idle-ttl", 0, "with --stateful: end sessions idle this long (0: never)")
	port := ""
	args := os.Args[2:]
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		port, args = args[0], args[1:]
	}
	_ = flags.Parse(args)
	s := build(*pageSize)
	addr := net.JoinHostPort("127.0.0.1", port)

	switch mode {
	case "stdio":
		if err := server.ServeStdio(s); err != nil {
			log.Printf("server: %v", err)
		}
	case "http":
		opts := []server.StreamableHTTPOption{server.WithEndpointPath("/mcp")}
		if *stateful {
			opts = append(opts, server.WithStateful(true))
		}
		if *stateless {
			opts = append(opts, server.WithStateLess(true))
		}
		if *idleTTL > 0 {
			opts = append(opts, server.WithSessionIdleTTL(*idleTTL))
		}
		log.Fatal(server.NewStreamableHTTPServer(s, opts...).Start(addr))
	case "sse":
		log.Fatal(server.NewSSEServer(s, server.WithBaseURL("http://"+addr)).Start(addr))
	default:
		log.Fatalf("unknown mode %q", mode)
	}
}
