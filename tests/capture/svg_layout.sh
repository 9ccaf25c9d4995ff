# svg_layout SVG: render it in headless Chromium with a script added to a copy
# that measures every label against every other label and every line, bar and
# area it could cover; prints "TEXTS OVERLAPS [first overlap]". Sourced by the
# tests of the AUX drawings (labels that overlap lines were a bug).
svg_layout() {
  local svg=$1 out=$1.layout.svg chromium
  chromium=$(command -v chromium || command -v chromium-browser || true)
  [ -n "$chromium" ] || { echo "skip"; return; }
  sed 's|</svg>$|<script><![CDATA[(function(){var s=document.documentElement;function r(e,pad){var b=e.getBoundingClientRect();return {l:b.left+pad,r:b.right-pad,t:b.top+pad,b:b.bottom-pad,e:e};}function ov(a,b){return a.l<b.r\&\&b.l<a.r\&\&a.t<b.b\&\&b.t<a.b;}var T=[],G=[],n=0,first="";Array.prototype.forEach.call(s.querySelectorAll("text"),function(e){if(e.textContent.trim())T.push(r(e,1));});Array.prototype.forEach.call(s.querySelectorAll("line,polyline,polygon,path,rect,circle"),function(e){if(e.parentNode===s\&\&e.tagName==="rect"\&\&e.getAttribute("width")==="100%")return;var b=r(e,0);if(b.b-b.t<1){b.t-=0.5;b.b+=0.5;}if(b.r-b.l<1){b.l-=0.5;b.r+=0.5;}G.push(b);});function name(x){return x.e.tagName+"("+(x.e.textContent\|\|"").slice(0,30)+")";}for(var i=0;i<T.length;i++){for(var k=i+1;k<T.length;k++)if(ov(T[i],T[k])){n++;if(!first)first=name(T[i])+" / "+name(T[k]);}for(var g=0;g<G.length;g++)if(ov(T[i],G[g])\&\&!G[g].e.contains(T[i].e)\&\&!T[i].e.contains(G[g].e)){n++;if(!first)first=name(T[i])+" / "+name(G[g]);}}s.setAttribute("data-layout",T.length+" "+n+" "+first);})();]]></script></svg>|' "$svg" >"$out"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --window-size=1200,1600 --dump-dom "file://$out" 2>/dev/null |
    sed -n 's/.*data-layout="\([^"]*\)".*/\1/p' | head -1
}
