import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.PriorityQueue;
import java.util.StringJoiner;

/**
 * The oracle for kafkaemu's core/streams/assignor_java.py: Java's own HashMap iteration order and
 * PriorityQueue order for the cases read from stdin, one answer line per case line.
 *   H <initial capacity, or -1 for new HashMap<>()> <key> ...  -> the keys as the map iterates them
 *   Q <value> ... ; <delta> ...  -> elements offered in order; each delta polls one (its index is
 *                                  printed), adds delta to its value and offers it again (-1: not again)
 */
public class JavaOrders {
    static final class Element {
        final int index;
        int value;
        Element(int index, int value) { this.index = index; this.value = value; }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ");
            StringJoiner out = new StringJoiner(" ");
            if (parts[0].equals("H")) {
                int cap = Integer.parseInt(parts[1]);
                HashMap<String, Integer> map = cap < 0 ? new HashMap<>() : new HashMap<>(cap);
                for (int i = 2; i < parts.length; i++) map.putIfAbsent(parts[i], i);
                for (String key : map.keySet()) out.add(key);
            } else {
                PriorityQueue<Element> queue = new PriorityQueue<>((a, b) -> Integer.compare(a.value, b.value));
                int i = 1;
                List<Element> all = new ArrayList<>();
                for (; !parts[i].equals(";"); i++) all.add(new Element(all.size(), Integer.parseInt(parts[i])));
                queue.addAll(all);
                for (i++; i < parts.length; i++) {
                    Element e = queue.poll();
                    if (e == null) { out.add("null"); continue; }
                    out.add(Integer.toString(e.index));
                    int delta = Integer.parseInt(parts[i]);
                    if (delta >= 0) { e.value += delta; queue.add(e); }
                }
            }
            System.out.println(out);
        }
    }
}
