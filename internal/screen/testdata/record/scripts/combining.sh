# Combining marks join the cell before them; Hangul jamo V and T join L.
printf 'e\xcc\x81 = é, a\xcc\x80\xcc\x96, o\xcc\x88\xcc\x84 n\xcc\x83\n'
printf 'precomposed 한, jamo \xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab and \xe1\x84\x80\xe1\x85\xa1 end\n'
printf 'devanagari क्षि thai กิ่ง zwj a\xe2\x80\x8db zwnj a\xe2\x80\x8cb\n'
printf '\xcc\x81 mark at the start of a line\n'
printf 'after wide 中\xcc\x81 and emoji 👍\xcc\x81\n'
printf 'after a move: ab\033[2Cc\xcc\x81\n'
printf '%s\xcc\x81\n' "$(printf 'm%.0s' $(seq 1 80))"    # on the last column, pending wrap
printf 'variation selectors: ☺\xef\xb8\x8f ☺\xef\xb8\x8e 1\xef\xb8\x8f\xe2\x83\xa3\n'
printf 'many marks: x\xcc\x81\xcc\x82\xcc\x83\xcc\x84\xcc\x85\xcc\x86\xcc\x87\xcc\x88 done\n'
