# Wide characters: CJK, fullwidth forms, emoji, and where they meet the margin.
a79=$(printf 'a%.0s' $(seq 1 79))
a78=$(printf 'b%.0s' $(seq 1 78))
echo '日本語のテキスト 中文 한국어 ｆｕｌｌｗｉｄｔｈ ＡＢＣ'
echo 'emoji: 😀 🎉 👍🏽 ❤️ ✅ 🇯🇵 👨‍👩‍👧 ⌚ ☕'
printf '%s中\n' "$a79"      # does not fit in the last column: wraps
printf '%s中\n' "$a78"      # ends exactly at the margin
printf '%s😀x\n' "$a79"
printf '中文中文中文中文中文中文中文中文中文中文中文中文中文中文中文中文中文中文中文中文中文中\n'
printf 'overwrite: 中文字\033[3Dx\033[2Cy\n'   # halves of wide characters overwritten
printf 'left half: 中文\033[4Dz\n'
printf '\033[?7lno wrap: %s中文\033[?7h\n' "$a79"
printf 'tab→\t中\t文\n'
printf 'ambiguous: ① ± × ÷ § ¶ ★ ○ ─ │ α β γ\n'
printf 'wide then CR: 中文中文\rAB\n'
