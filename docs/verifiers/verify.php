<?php
// Verifies an amil direct callback (spec 5.3). Usage: php verify.php <api-key> < callback-body
// In a web handler, pass file_get_contents('php://input'): $_POST and parse_str rename keys.

// WHATWG form style, as the service signs: space is "+", "*" kept, "~" is "%7E"
// (http_build_query and urlencode keep "~" and encode "*").
function form_encode(string $text): string
{
    $safe = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._';
    $out = '';
    for ($i = 0, $n = strlen($text); $i < $n; $i++) {
        $c = $text[$i];
        if ($c === ' ') {
            $out .= '+';
        } elseif (strpos($safe, $c) !== false) {
            $out .= $c;
        } else {
            $out .= sprintf('%%%02X', ord($c));
        }
    }
    return $out;
}

/** The fields of an application/x-www-form-urlencoded body; null when a field repeats. */
function parse_form(string $body): ?array
{
    $fields = [];
    foreach (explode('&', $body) as $pair) {
        if ($pair === '') {
            continue;
        }
        $parts = explode('=', $pair, 2);
        $key = urldecode($parts[0]);
        if (array_key_exists($key, $fields)) {
            return null;
        }
        $fields[$key] = urldecode($parts[1] ?? '');
    }
    return $fields;
}

/** True when the callback's signature matches its other fields. */
function verify_callback(string $body, string $apiKey): bool
{
    $fields = parse_form($body);
    if ($fields === null || !isset($fields['signature'])) {
        return false;
    }
    $received = strtolower($fields['signature']);
    unset($fields['signature']);
    // The callback's field names are ASCII, where byte order is JavaScript's UTF-16 order.
    $keys = array_map('strval', array_keys($fields));
    usort($keys, 'strcmp');
    $pairs = [];
    foreach ($keys as $key) {
        $pairs[] = form_encode($key) . '=' . form_encode($fields[$key]);
    }
    $key = hex2bin(str_replace('-', '', $apiKey)); // 16 raw bytes, never the ASCII text
    $expected = substr(hash_hmac('sha256', implode('&', $pairs), $key), 0, 16);
    return hash_equals($expected, $received);
}

$valid = verify_callback(stream_get_contents(STDIN), $argv[1]);
echo $valid ? "valid\n" : "invalid\n";
exit($valid ? 0 : 1);
