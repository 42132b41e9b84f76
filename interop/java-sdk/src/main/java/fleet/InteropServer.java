// A small MCP server on the official Java SDK (io.modelcontextprotocol.sdk:mcp), for the
// mcp-fleet interop suite: the same surface as interop/python_server.py.
//
//   java -cp … fleet.InteropServer stdio
//   java -cp … fleet.InteropServer http PORT [--sweep-ms N]   (Streamable HTTP on /mcp, embedded Tomcat)
//   java -cp … fleet.InteropServer sse PORT       (legacy SSE: GET /sse, POST /mcp/message)
//
// HTTP listens on 127.0.0.1 only. Tools `echo(message)`, `add(a, b)` and `roots` (asks the
// client for roots/list when it declared roots); prompt `greeting(name)`; resource
// `fleet://info` and template `fleet://items/{item_id}`.
package fleet;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.server.transport.HttpServletSseServerTransportProvider;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

public final class InteropServer {
    static final String SDK_VERSION = "2.2.0"; // pinned in pom.xml; said in serverInfo

    private InteropServer() {}

    static McpSchema.CallToolResult text(String s) {
        return McpSchema.CallToolResult.builder().addTextContent(s).isError(false).build();
    }

    // These tools change nothing; said so, as a careful server does.
    static McpSchema.ToolAnnotations readOnly(String title) {
        return new McpSchema.ToolAnnotations(title, true, false, true, false, null);
    }

    static McpSchema.Tool tool(McpJsonMapper json, String name, String description, String schema) {
        return McpSchema.Tool.builder().name(name).description(description)
                .annotations(readOnly(name)).inputSchema(json, schema).build();
    }

    static double number(Object v) {
        return v instanceof Number n ? n.doubleValue() : Double.parseDouble(String.valueOf(v));
    }

    /** The server's features on any transport's sync specification. */
    static <S extends McpServer.SyncSpecification<S>> McpServer.SyncSpecification<S> features(
            McpServer.SyncSpecification<S> spec, McpJsonMapper json) {
        var echo = McpServerFeatures.SyncToolSpecification.builder()
                .tool(tool(json, "echo", "Echo the message back.",
                        "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"}},\"required\":[\"message\"]}"))
                .callHandler((ex, req) -> text("Echo: " + req.arguments().get("message")))
                .build();
        var add = McpServerFeatures.SyncToolSpecification.builder()
                .tool(tool(json, "add", "Add two numbers.",
                        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}"))
                .callHandler((ex, req) -> text(String.valueOf(
                        number(req.arguments().get("a")) + number(req.arguments().get("b")))))
                .build();
        var roots = McpServerFeatures.SyncToolSpecification.builder()
                .tool(tool(json, "roots", "List the client's roots when it declared them.",
                        "{\"type\":\"object\",\"properties\":{}}"))
                .callHandler(InteropServer::roots)
                .build();
        var info = new McpServerFeatures.SyncResourceSpecification(
                McpSchema.Resource.builder().uri("fleet://info").name("info")
                        .description("What this server is.").mimeType("text/plain").build(),
                (ex, req) -> new McpSchema.ReadResourceResult(List.of(new McpSchema.TextResourceContents(
                        req.uri(), "text/plain", "fleet-interop-java-sdk on mcp " + SDK_VERSION))));
        var item = new McpServerFeatures.SyncResourceTemplateSpecification(
                McpSchema.ResourceTemplate.builder().uriTemplate("fleet://items/{item_id}").name("item")
                        .description("One item, by id.").mimeType("text/plain").build(),
                (ex, req) -> new McpSchema.ReadResourceResult(List.of(new McpSchema.TextResourceContents(
                        req.uri(), "text/plain", "item " + req.uri().substring("fleet://items/".length())))));
        var greeting = new McpServerFeatures.SyncPromptSpecification(
                new McpSchema.Prompt("greeting", "Greet someone by name.",
                        List.of(new McpSchema.PromptArgument("name", "who to greet", true))),
                (ex, req) -> new McpSchema.GetPromptResult("greeting", List.of(new McpSchema.PromptMessage(
                        McpSchema.Role.USER,
                        new McpSchema.TextContent("Please greet " + req.arguments().get("name") + " warmly.")))));
        return spec.serverInfo("fleet-interop-java-sdk", SDK_VERSION)
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).resources(false, false)
                        .prompts(false).build())
                .tools(echo, add, roots)
                .resources(info)
                .resourceTemplates(item)
                .prompts(greeting);
    }

    static McpSchema.CallToolResult roots(McpSyncServerExchange ex, McpSchema.CallToolRequest req) {
        var caps = ex.getClientCapabilities();
        if (caps == null || caps.roots() == null) {
            return text("no roots capability");
        }
        var listed = ex.listRoots().roots().stream().map(McpSchema.Root::uri)
                .collect(Collectors.joining(","));
        return text("roots: " + listed);
    }

    static void serve(int port, HttpServlet servlet) throws Exception {
        var tomcat = new Tomcat();
        tomcat.setBaseDir(Files.createTempDirectory("fleet-tomcat").toString());
        var connector = new Connector();
        connector.setPort(port);
        connector.setProperty("address", "127.0.0.1");
        tomcat.setConnector(connector);
        Context ctx = tomcat.addContext("", null);
        Wrapper w = Tomcat.addServlet(ctx, "mcp", servlet);
        w.setAsyncSupported(true);
        ctx.addServletMappingDecoded("/*", "mcp");
        tomcat.start();
        tomcat.getServer().await();
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: InteropServer stdio | http PORT | sse PORT");
            System.exit(2);
        }
        McpJsonMapper json = McpJsonDefaults.getMapper();
        switch (args[0]) {
            case "stdio" -> {
                features(McpServer.sync(new StdioServerTransportProvider(json)), json).build();
                Thread.currentThread().join(); // the transport's threads serve until stdin ends
            }
            case "http" -> {
                var builder = HttpServletStreamableServerTransportProvider.builder()
                        .jsonMapper(json).mcpEndpoint("/mcp");
                // `--sweep-ms N`: evict sessions idle that long, so a client meets the 404.
                if (args.length > 3 && args[2].equals("--sweep-ms")) {
                    builder.sessionSweepInterval(java.time.Duration.ofMillis(Long.parseLong(args[3])));
                }
                var transport = builder.build();
                features(McpServer.sync(transport), json).build();
                serve(Integer.parseInt(args[1]), transport);
            }
            case "sse" -> {
                var transport = HttpServletSseServerTransportProvider.builder()
                        .jsonMapper(json).sseEndpoint("/sse").messageEndpoint("/mcp/message").build();
                features(McpServer.sync(transport), json).build();
                serve(Integer.parseInt(args[1]), transport);
            }
            default -> {
                System.err.println("unknown mode " + args[0]);
                System.exit(2);
            }
        }
    }
}
