// Verifies an amil direct callback (spec 5.3). Usage: dotnet run -- <api-key> < callback-body
using System;
using System.Collections.Generic;
using System.Linq;
using System.Security.Cryptography;
using System.Text;

public static class AmilCallback
{
    // WHATWG form style, as the service signs: space is "+", "*" kept, "~" is "%7E"
    // (Uri.EscapeDataString and WebUtility.UrlEncode each differ from it).
    static string FormEncode(string text)
    {
        var out_ = new StringBuilder();
        foreach (byte b in Encoding.UTF8.GetBytes(text))
        {
            char c = (char)b;
            if (c == ' ') out_.Append('+');
            else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                     || c == '*' || c == '-' || c == '.' || c == '_') out_.Append(c);
            else out_.Append('%').Append(b.ToString("X2"));
        }
        return out_.ToString();
    }

    static string FormDecode(string text) => Uri.UnescapeDataString(text.Replace('+', ' '));

    /// <summary>True when the callback's signature matches its other fields.</summary>
    public static bool VerifyCallback(string body, string apiKey)
    {
        var fields = new Dictionary<string, string>();
        foreach (var pair in body.Split('&'))
        {
            if (pair.Length == 0) continue;
            int eq = pair.IndexOf('=');
            var key = FormDecode(eq < 0 ? pair : pair[..eq]);
            var value = eq < 0 ? "" : FormDecode(pair[(eq + 1)..]);
            if (!fields.TryAdd(key, value)) return false; // a repeated field
        }
        if (!fields.Remove("signature", out var received)) return false;
        // Ordinal order is UTF-16 code unit order, as JavaScript sorts.
        var message = string.Join("&", fields.Keys.OrderBy(k => k, StringComparer.Ordinal)
            .Select(k => FormEncode(k) + "=" + FormEncode(fields[k])));
        var key16 = Convert.FromHexString(apiKey.Replace("-", "")); // 16 raw bytes, never the ASCII text
        var digest = HMACSHA256.HashData(key16, Encoding.UTF8.GetBytes(message));
        var expected = Convert.ToHexString(digest)[..16].ToLowerInvariant();
        return CryptographicOperations.FixedTimeEquals(
            Encoding.ASCII.GetBytes(expected), Encoding.ASCII.GetBytes(received.ToLowerInvariant()));
    }

    public static int Main(string[] args)
    {
        bool valid = VerifyCallback(Console.In.ReadToEnd(), args[0]);
        Console.WriteLine(valid ? "valid" : "invalid");
        return valid ? 0 : 1;
    }
}
