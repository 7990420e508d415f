package kafkaemu.jvm;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A client of kafkaemu's HTTP control API with java.net.http and a small JSON reader/writer
 * (no dependency beyond the JDK). Answers are JSON values: Map, List, String, Long, Double,
 * Boolean or null. A 4xx/5xx answer throws ControlApi.Refused with the status and message.
 */
final class ControlApi {
    static final class Refused extends RuntimeException {
        final int status;
        Refused(int status, String message) { super("HTTP " + status + ": " + message); this.status = status; }
    }

    private final String url;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    ControlApi(String url) { this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url; }

    Object get(String path) throws IOException, InterruptedException { return send("GET", path, null); }

    Object post(String path, Object... keysAndValues) throws IOException, InterruptedException {
        return send("POST", path, obj(keysAndValues));
    }

    Object put(String path, Object... keysAndValues) throws IOException, InterruptedException {
        return send("PUT", path, obj(keysAndValues));
    }

    Object delete(String path) throws IOException, InterruptedException { return send("DELETE", path, null); }

    @SuppressWarnings("unchecked")
    Map<String, Object> map(Object json) { return (Map<String, Object>) json; }

    static String enc(String segment) { return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"); }

    Object send(String method, String path, Map<String, Object> body) throws IOException, InterruptedException {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofMinutes(3));
        String data = body == null ? null : Json.write(body);
        req.method(method, data == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(data));
        if (data != null) req.header("Content-Type", "application/json");
        HttpResponse<String> resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
        Object answer = Json.parse(resp.body());
        if (resp.statusCode() >= 400) {
            throw new Refused(resp.statusCode(), String.valueOf(((Map<?, ?>) answer).get("error")));
        }
        return answer;
    }

    static Map<String, Object> obj(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        return m;
    }

    /** Just enough JSON for the control API. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) { this.s = s; }

        static Object parse(String text) {
            Json j = new Json(text);
            Object v = j.value();
            j.ws();
            if (j.i != text.length()) throw new IllegalArgumentException("trailing JSON at " + j.i);
            return v;
        }

        private void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }

        private Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++; ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws(); String k = string(); ws(); i++;  // ':'
                    m.put(k, value()); ws();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++; ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value()); ws();
                    if (s.charAt(i++) == ']') return l;
                }
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String n = s.substring(start, i);
            return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.parseDouble(n) : (Object) Long.parseLong(n);
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++;  // opening quote
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
        }

        static String write(Object v) {
            if (v == null) return "null";
            if (v instanceof String) {
                StringBuilder b = new StringBuilder("\"");
                for (char c : ((String) v).toCharArray()) {
                    if (c == '"' || c == '\\') b.append('\\').append(c);
                    else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
                return b.append('"').toString();
            }
            if (v instanceof Map) {
                StringBuilder b = new StringBuilder("{");
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (b.length() > 1) b.append(',');
                    b.append(write(String.valueOf(e.getKey()))).append(':').append(write(e.getValue()));
                }
                return b.append('}').toString();
            }
            if (v instanceof List) {
                StringBuilder b = new StringBuilder("[");
                for (Object o : (List<?>) v) {
                    if (b.length() > 1) b.append(',');
                    b.append(write(o));
                }
                return b.append(']').toString();
            }
            return String.valueOf(v);
        }
    }
}
