// The same surface on the Java SDK's 2026-07-28 server (io.modelcontextprotocol.modern):
// repositories instead of registrations, a list page per call (one item a page here, so a
// client has to follow nextCursor), and roots asked by an input_required result.
//
//   java -cp … fleet.ModernServer stdio
//   java -cp … fleet.ModernServer http PORT      (on /mcp, embedded Tomcat)
package fleet;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.InputResponses;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncPrompt;
import io.modelcontextprotocol.modern.server.feature.McpSyncPromptRepository;
import io.modelcontextprotocol.modern.server.feature.McpSyncResource;
import io.modelcontextprotocol.modern.server.feature.McpSyncResourceRepository;
import io.modelcontextprotocol.modern.server.feature.McpSyncResourceTemplate;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.PromptsFeature;
import io.modelcontextprotocol.modern.server.feature.PromptsPage;
import io.modelcontextprotocol.modern.server.feature.ResourceTemplatesPage;
import io.modelcontextprotocol.modern.server.feature.ResourcesFeature;
import io.modelcontextprotocol.modern.server.feature.ResourcesPage;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import io.modelcontextprotocol.modern.server.transport.HttpServletMcpTransport;
import io.modelcontextprotocol.modern.server.transport.StdioMcpTransport;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.stream.Collectors;

public final class ModernServer {
    private ModernServer() {}

    /** One item a page: the cursor is the index of the next item. */
    static <T, P> P page(List<T> items, String cursor, BiFunction<List<T>, String, P> make) {
        int i = cursor == null ? 0 : Integer.parseInt(cursor);
        String next = i + 1 < items.size() ? String.valueOf(i + 1) : null;
        return make.apply(i < items.size() ? List.of(items.get(i)) : List.of(), next);
    }

    static McpSyncResponse<McpSchema.CallToolOutcome> text(String s) {
        return McpSyncResponse.result(McpSchema.CallToolResult.builder()
                .addContent(McpSchema.TextContent.builder(s).build()).isError(false).build());
    }

    static McpSchema.Tool tool(McpJsonMapper json, String name, String description, String schema) {
        return McpSchema.Tool.builder(name, json, schema).description(description)
                .annotations(new McpSchema.ToolAnnotations(name, true, false, true, false)).build();
    }

    static double number(Object v) {
        return v instanceof Number n ? n.doubleValue() : Double.parseDouble(String.valueOf(v));
    }

    static McpServer build(McpJsonMapper json) {
        List<McpSyncTool> tools = List.of(
                McpSyncTool.of(tool(json, "echo", "Echo the message back.",
                        "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"}},\"required\":[\"message\"]}"),
                        (ctx, req) -> text("Echo: " + req.arguments().get("message"))),
                McpSyncTool.of(tool(json, "add", "Add two numbers.",
                        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}"),
                        (ctx, req) -> text(String.valueOf(number(req.arguments().get("a")) + number(req.arguments().get("b"))))),
                McpSyncTool.of(tool(json, "roots", "List the client's roots when it declared them.",
                        "{\"type\":\"object\",\"properties\":{}}"),
                        (ctx, req) -> roots(ctx, req, json)));
        var toolRepo = new McpSyncToolRepository() {
            public ToolsPage list(McpRequestContext ctx, String cursor) {
                return page(tools.stream().map(McpSyncTool::definition).toList(), cursor,
                        (l, next) -> new ToolsPage(l, next, null, null));
            }

            public McpSyncTool find(McpRequestContext ctx, String name) {
                return tools.stream().filter(t -> t.definition().name().equals(name)).findFirst().orElse(null);
            }
        };
        var info = McpSchema.Resource.builder("fleet://info", "info").description("What this server is.")
                .mimeType("text/plain").build();
        var item = McpSchema.ResourceTemplate.builder("fleet://items/{item_id}", "item")
                .description("One item, by id.").mimeType("text/plain").build();
        var resourceRepo = new McpSyncResourceRepository() {
            public ResourcesPage list(McpRequestContext ctx, String cursor) {
                return page(List.of(info), cursor, (l, next) -> new ResourcesPage(l, next, null, null));
            }

            public ResourceTemplatesPage listTemplates(McpRequestContext ctx, String cursor) {
                return page(List.of(item), cursor, (l, next) -> new ResourceTemplatesPage(l, next, null, null));
            }

            public McpSyncResource find(McpRequestContext ctx, String uri) {
                String text = uri.equals("fleet://info") ? "fleet-interop-java-sdk (modern) on mcp " + InteropServer.SDK_VERSION
                        : uri.startsWith("fleet://items/") ? "item " + uri.substring("fleet://items/".length()) : null;
                if (text == null) {
                    return null;
                }
                return McpSyncResource.of((c, req) -> McpSyncResponse.result(McpSchema.ReadResourceResult.builder(
                        List.of(McpSchema.TextResourceContents.builder(req.uri(), text).mimeType("text/plain").build()))
                        .build()));
            }

            public McpSyncResourceTemplate findTemplate(McpRequestContext ctx, String uri) {
                return uri.startsWith("fleet://items/") ? McpSyncResourceTemplate.of(item) : null;
            }
        };
        var greeting = McpSyncPrompt.of(McpSchema.Prompt.builder("greeting").description("Greet someone by name.")
                        .arguments(List.of(McpSchema.PromptArgument.builder("name").required(true).build())).build(),
                (ctx, req) -> McpSyncResponse.result(McpSchema.GetPromptResult.builder(List.of(new McpSchema.PromptMessage(
                        McpSchema.Role.USER, McpSchema.TextContent.builder(
                                "Please greet " + req.arguments().get("name") + " warmly.").build()))).build()));
        var promptRepo = new McpSyncPromptRepository() {
            public PromptsPage list(McpRequestContext ctx, String cursor) {
                return page(List.of(greeting.definition()), cursor, (l, next) -> new PromptsPage(l, next, null, null));
            }

            public McpSyncPrompt find(McpRequestContext ctx, String name) {
                return name.equals("greeting") ? greeting : null;
            }
        };
        return McpServer.builder()
                .serverInfo(McpSchema.Implementation.builder("fleet-interop-java-sdk-modern", InteropServer.SDK_VERSION).build())
                .jsonMapper(json)
                .feature(ToolsFeature.ofSync(toolRepo))
                .feature(ResourcesFeature.ofSync(resourceRepo))
                .feature(PromptsFeature.ofSync(promptRepo))
                .build();
    }

    static McpSyncResponse<McpSchema.CallToolOutcome> roots(McpRequestContext ctx, McpSchema.CallToolRequest req,
            McpJsonMapper json) {
        Map<String, Object> answers = req.inputResponses();
        if (answers != null && answers.containsKey("roots")) {
            var listed = InputResponses.get(answers, "roots", McpSchema.ListRootsResult.class, json);
            return text("roots: " + listed.roots().stream().map(McpSchema.Root::uri).collect(Collectors.joining(",")));
        }
        if (ctx.clientCapabilities() == null || !ctx.clientCapabilities().supportsRoots()) {
            return text("no roots capability");
        }
        return McpSyncResponse.result(McpSchema.InputRequiredResult.builder().listRoots("roots").build());
    }

    public static void main(String[] args) throws Exception {
        McpJsonMapper json = McpJsonDefaults.getMapper();
        McpServer server = build(json);
        switch (args.length > 0 ? args[0] : "") {
            case "stdio" -> {
                new StdioMcpTransport(server, json).start().block();
                Thread.currentThread().join();
            }
            case "http" -> InteropServer.serve(Integer.parseInt(args[1]),
                    HttpServletMcpTransport.builder(server).jsonMapper(json).endpoint("/mcp").build());
            default -> {
                System.err.println("usage: ModernServer stdio | http PORT");
                System.exit(2);
            }
        }
    }
}
