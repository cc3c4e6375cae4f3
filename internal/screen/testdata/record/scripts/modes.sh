# Modes a snapshot must carry, left set at the end.
printf '\033[?1h\033=application cursor keys\n'
printf '\033[?2004hbracketed paste\n'
printf '\033[?1004hfocus events\n'
printf '\033[?1000h\033[?1006hmouse vt200, then \033[?1002hdrag\n'
printf '\033[?9hx10 then \033[?9l\033[?1002h back to drag\n'
printf '\033[?7lno auto-wrap: %s\n' "$(printf 'n%.0s' $(seq 1 100))END"
printf '\033[?7hwrap again: %s\n' "$(printf 'w%.0s' $(seq 1 100))"
printf '\033[?25lcursor hidden\n'
printf '\033[?12h\033[3 qblinking underline cursor style\n'
printf '\033[?5h\033[?5lreverse video on and off\n'
printf '\033[?7l'
