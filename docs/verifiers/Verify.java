// Verifies an amil direct callback (spec 5.3). Usage: java Verify.java <api-key> < callback-body
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

public class Verify {
    // WHATWG form style, as the service signs: space is "+", "*" kept, "~" is "%7E"
    // (URLEncoder.encode keeps "*" too, but it is written out here so nothing depends on it).
    static String formEncode(String text) {
        StringBuilder out = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c == ' ') {
                out.append('+');
            } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '*' || c == '-' || c == '.' || c == '_') {
                out.append((char) c);
            } else {
                out.append(String.format("%%%02X", c));
            }
        }
        return out.toString();
    }

    /** True when the callback's signature matches its other fields. */
    static boolean verifyCallback(String body, String apiKey) throws GeneralSecurityException {
        // A TreeMap of Strings sorts by UTF-16 code unit, as JavaScript does.
        Map<String, String> fields = new TreeMap<>();
        for (String pair : body.split("&")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            if (fields.put(key, value) != null) return false; // a repeated field
        }
        String received = fields.remove("signature");
        if (received == null) return false;
        StringJoiner message = new StringJoiner("&");
        fields.forEach((k, v) -> message.add(formEncode(k) + "=" + formEncode(v)));
        byte[] key = HexFormat.of().parseHex(apiKey.replace("-", "")); // 16 raw bytes, never the ASCII text
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        byte[] digest = mac.doFinal(message.toString().getBytes(StandardCharsets.UTF_8));
        String expected = HexFormat.of().formatHex(digest).substring(0, 16);
        return MessageDigest.isEqual(
            expected.getBytes(StandardCharsets.US_ASCII),
            received.toLowerCase(java.util.Locale.ROOT).getBytes(StandardCharsets.US_ASCII));
    }

    public static void main(String[] args) throws IOException, GeneralSecurityException {
        String body = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        boolean valid = verifyCallback(body, args[0]);
        System.out.println(valid ? "valid" : "invalid");
        System.exit(valid ? 0 : 1);
    }
}
