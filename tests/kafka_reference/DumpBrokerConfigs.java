import java.lang.reflect.*;
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;

public class DumpBrokerConfigs {
    static Object field(Object o, String name) {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try { Field f = c.getDeclaredField(name); f.setAccessible(true); return f.get(o); } catch (Exception e) {}
        }
        return null;
    }
    static String q(Object s) {
        if (s == null) return "null";
        return "\"" + s.toString().replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }
    public static void main(String[] a) throws Exception {
        ConfigDef def = org.apache.kafka.server.config.AbstractKafkaConfig.CONFIG_DEF;
        Set<String> dyn = org.apache.kafka.server.config.DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS;
        Set<String> perBroker = org.apache.kafka.server.config.DynamicBrokerConfig.perBrokerConfigs(new Properties());
        StringBuilder sb = new StringBuilder("[\n");
        boolean first = true;
        for (ConfigDef.ConfigKey k : new TreeMap<>(def.configKeys()).values()) {
            if (!first) sb.append(",\n"); first = false;
            String dflt;
            if (k.defaultValue == ConfigDef.NO_DEFAULT_VALUE) dflt = "{\"none\": true}";
            else dflt = q(k.defaultValue == null ? null : ConfigDef.convertToString(k.defaultValue, k.type));
            String v = "null";
            if (k.validator != null) {
                String cls = k.validator.getClass().getSimpleName();
                Object min = field(k.validator, "min"), max = field(k.validator, "max");
                Object in = field(k.validator, "validStrings");
                if (in == null) in = field(k.validator, "validString");
                Object inner = field(k.validator, "validString");
                v = "{\"class\": " + q(cls) + ", \"min\": " + q(min) + ", \"max\": " + q(max)
                    + ", \"in\": " + q(in) + ", \"text\": " + q(k.validator.toString()) + "}";
            }
            sb.append("{\"name\": ").append(q(k.name)).append(", \"type\": ").append(q(k.type))
              .append(", \"default\": ").append(dflt).append(", \"validator\": ").append(v)
              .append(", \"importance\": ").append(q(k.importance))
              .append(", \"dynamic\": ").append(dyn.contains(k.name))
              .append(", \"internal\": ").append(k.internalConfig).append("}");
        }
        sb.append("\n]\n");
        System.out.print(sb);
    }
}
