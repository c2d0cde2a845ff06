"""The bootstrap generator's word lists: action verbs and their plain-words synonyms, domain
vocabularies, the words that are never a product name, and a small CJK-to-English glossary of
common software terms (so Chinese and Japanese tool descriptions still reach English queries).

Data only, plus lookups over it; nothing here reads files.
"""

from __future__ import annotations

import re

from cartograph.generate.text import wordset


def _pairs(table: str) -> dict[str, str]:
    """``"a=b c=d"`` -> ``{"a": "b", "c": "d"}`` (whitespace-separated ``key=value`` items)."""
    return dict(item.split("=", 1) for item in table.split())


# canonical verb -> synonyms users say for it (first one is used in prose)
VERB_SYNONYMS: dict[str, tuple[str, ...]] = {
    "get": ("fetch", "retrieve", "look up", "show"),
    "list": ("show all", "enumerate", "browse"),
    "search": ("find", "look up", "query"),
    "find": ("search", "look up", "locate"),
    "query": ("search", "look up", "ask"),
    "read": ("view", "open", "load"),  # "View values from a sheet", not "Open values"
    "create": ("add", "make", "new"),
    "add": ("create", "insert", "append"),
    "insert": ("add", "put"),
    "update": ("edit", "modify", "change"),
    "edit": ("modify", "change", "update"),
    "set": ("configure", "change", "assign"),
    "delete": ("remove", "erase", "drop"),
    "remove": ("delete", "drop"),
    "send": ("post", "deliver", "message"),
    "post": ("publish", "send"),
    "write": ("save", "store"),
    "save": ("store", "write"),
    "generate": ("create", "make", "produce", "draw"),
    "convert": ("transform", "export", "change format"),
    "run": ("execute", "start"),
    "execute": ("run",),
    "start": ("launch", "begin", "run"),
    "stop": ("halt", "end", "kill"),
    "download": ("fetch", "save locally"),
    "upload": ("attach", "put"),
    "fetch": ("get", "download", "retrieve"),
    "analyze": ("analyse", "inspect", "evaluate"),
    "analyse": ("analyze", "inspect"),
    "calculate": ("compute", "work out"),
    "compute": ("calculate",),
    "translate": ("convert language",),
    "summarize": ("summarise", "condense"),
    "validate": ("check", "verify", "lint"),
    "check": ("verify", "validate", "inspect"),
    "describe": ("inspect", "show details"),
    "navigate": ("go to", "open", "browse"),  # "Go to a URL", not "Open to a URL"
    "click": ("press", "select"),
    "move": ("relocate", "rename"),
    "copy": ("duplicate",),
    "merge": ("combine", "join"),
    "close": ("finish", "resolve"),
    "open": ("view", "start"),
    "publish": ("release", "post"),
    "schedule": ("plan", "book"),
    "cancel": ("abort", "stop"),
    "invite": ("add member",),
    "track": ("follow", "monitor"),
    "monitor": ("watch", "track"),
    "recommend": ("suggest",),
    "export": ("download", "save as"),
    "import": ("load", "upload"),
    "extract": ("pull out", "parse"),
    "parse": ("extract", "read"),
    "render": ("draw", "display"),
    "screenshot": ("capture screen", "snapshot"),
    "lookup": ("look up", "find"),
    "geocode": ("locate address", "coordinates"),
    "transcribe": ("transcript", "speech to text"),
    "comment": ("reply", "note"),
    "assign": ("give", "set owner"),
    "archive": ("shelve",),
    "subscribe": ("follow",),
    "resolve": ("close", "fix"),
    "deploy": ("release", "ship"),
    "install": ("set up", "add package"),
    "test": ("check",),
    "count": ("number of",),
    "compare": ("diff",),
    "diff": ("compare", "changes"),
    "sort": ("order",),
    "filter": ("narrow", "select"),
    "load": ("open", "read"),
    "play": ("start",),
    "predict": ("forecast",),
    "sync": ("synchronize", "refresh"),
    "link": ("connect", "attach"),
    "switch": ("change", "select"),
    "estimate": ("compute", "approximate"),
    "fill": ("enter", "type"),
    "index": ("rebuild index",),
    "refresh": ("reload", "update"),
    "think": ("reason", "plan"),
    "log": ("record",),
    "rank": ("order", "sort"),
    "detect": ("identify", "find"),
    "review": ("check", "assess"),
    "approve": ("accept",),
    "reject": ("decline",),
    "share": ("send", "publish"),
    "connect": ("link",),
    "login": ("sign in", "authenticate"),
    "authenticate": ("log in", "sign in"),
}

# words in tool names that mean a canonical verb
VERB_ALIASES: dict[str, str] = _pairs(
    """retrieve=get show=get view=get fetch=fetch obtain=get lookup=lookup look=get browse=list
    enumerate=list make=create new=create modify=update change=update patch=update put=set
    upsert=update erase=delete del=delete rm=delete destroy=delete drop=delete exec=execute
    invoke=run call=run launch=start kill=stop terminate=stop draw=generate plot=generate
    produce=generate build=create compose=create store=save append=add push=upload
    pull=download evaluate=analyze inspect=check verify=validate lint=validate
    summarise=summarize transform=convert scrape=extract crawl=fetch explore=search
    discover=search locate=find edit=edit rename=move go=navigate visit=navigate
    capture=screenshot take=get reply=comment calc=calculate recommend=recommend
    suggest=recommend"""
)

# words that are never a product name (packaging, protocol, filler)
NOT_PRODUCT = wordset(
    """mcp server servers model context protocol official the a an for and of by py js ts
    node python npm pypi tool tools client api apis service services simple free basic
    lite plugin agent"""
)

# domain tag -> words that signal it (in server names, tool names, params, descriptions)
DOMAINS: dict[str, frozenset[str]] = {
    name: frozenset(words.split())
    for name, words in {
        "code": "github gitlab git repository repo repos commit commits branch pull merge "
        "code lint eslint npm package packages dependency dependencies maven pypi library "
        "libraries sdk",
        "issues": "issue issues ticket tickets bug bugs jira linear sprint backlog epic",
        "docs": "documentation docs doc page pages wiki knowledge article articles",
        "documents": "document documents pdf word docx paragraph paragraphs office "
        "powerpoint slide slides presentation ppt",
        "spreadsheets": "spreadsheet spreadsheets excel sheet sheets worksheet workbook "
        "cell cells csv airtable",
        "email": "email emails mail inbox gmail outlook message messages draft recipient",
        "chat": "slack channel channels chat discord teams thread threads dm",
        "calendar": "calendar event events meeting meetings schedule availability",
        "files": "file files directory directories folder folders path filesystem disk",
        "web": "web url urls webpage website page browser fetch html http scrape crawl "
        "sitemap link links",
        "search": "search query keyword keywords results engine bing google duckduckgo",
        "browser automation": "browser navigate click screenshot playwright puppeteer "
        "selector element tab",
        "maps": "map maps geocode location locations address coordinates latitude longitude "
        "place places route directions parking nearby osm",
        "travel": "flight flights hotel hotels airbnb listing listings trip booking train "
        "ticket station",
        "weather": "weather forecast temperature rain wind climate",
        "finance": "stock stocks price prices market ticker finance financial crypto "
        "cryptocurrency exchange currency invoice payment payments billing cost revenue",
        "charts": "chart charts graph plot visualization diagram mermaid mindmap",
        "images": "image images photo photos picture icon icons svg png",
        "audio": "audio music sound beat tempo mfcc song songs speech",
        "video": "video videos youtube transcript stream",
        "news": "news trending headlines trends hot rank ranking",
        "research": "paper papers arxiv research citation scholar pubmed study studies",
        "biomedical": "gene genes variant variants trial trials drug disease protein",
        "database": "database databases sql table tables query schema postgres mysql "
        "sqlite index collection collections record records row rows",
        "cloud": "aws cloud s3 ec2 lambda kubernetes cluster clusters pod pods container "
        "containers docker deployment deploy azure gcp",
        "monitoring": "logs log metrics alert alerts dashboard dashboards incident "
        "monitor trace traces grafana sentry",
        "crm": "contact contacts deal deals lead leads company companies customer "
        "customers hubspot salesforce",
        "project management": "project projects task tasks board boards item items "
        "workflow workflows monday asana todo",
        "memory": "memory memories note notes entity entities relation relations observation",
        "time": "time timezone date dates clock convert",
        "math": "calculate calculator math number numbers random sum expression",
        "games": "game games chess card cards player players match league",
        "food": "recipe recipes meal meals cook cooking dish food",
        "design": "component components ui design icon theme figma css",
        "security": "security vulnerability vulnerabilities secret secrets auth token "
        "permission permissions whois domain",
    }.items()
}

# common CJK software and everyday terms -> English words (longest match wins)
CJK_GLOSSARY: dict[str, str] = {
    term: english.replace("_", " ")
    for term, english in _pairs(
        """搜索=search 查询=query_lookup 获取=get 列表=list 创建=create 删除=delete
        更新=update 修改=edit 添加=add 生成=generate 下载=download 上传=upload
        发送=send 读取=read 写入=write 转换=convert 翻译=translate 分析=analyze
        推荐=recommend 计算=calculate 网页=web_page 网站=website 链接=link
        内容=content 文件=file 目录=directory 图片=image 图像=image 视频=video
        音乐=music 音频=audio 新闻=news 资讯=news_information
        热榜=trending_hot_list 热搜=trending_search 热门=popular_trending
        排行榜=ranking_chart 榜单=ranking_list 热点=hot_topics_trending
        文章=article 天气=weather 预报=forecast 城市=city 地图=map 地址=address
        位置=location 时间=time 日期=date 股票=stock 价格=price 市场=market
        汇率=exchange_rate 货币=currency 用户=user 数据=data 图表=chart
        表格=table_spreadsheet 文档=document 关键词=keyword 关键字=keyword
        结果=results 标题=title 摘要=summary_abstract 详情=details
        详细信息=details 信息=information 菜谱=recipe 食谱=recipe 菜品=dish
        膳食=meal 购物=shopping 清单=list 分类=category 游戏=game 卡牌=card
        电影=movie_film 图书=book 书籍=book 读书=reading_books 电视剧=tv_series
        科技=technology 技术=technology_tech 财经=finance 商业=business
        体育=sports 娱乐=entertainment 健康=health 教育=education 政治=politics
        评测=review 产品=product 火车=train 车票=train_ticket 车站=station
        余票=ticket_availability 航班=flight 酒店=hotel 旅游=travel 微信=wechat
        微博=weibo 知乎=zhihu 百度=baidu 哔哩哔哩=bilibili 抖音=douyin_tiktok
        豆瓣=douban 必应=bing 苹果=apple 纽约时报=new_york_times
        八字=bazi_chinese_astrology 命理=fortune 农历=lunar_calendar
        公历=gregorian_calendar 角色=character 武器=weapon 攻略=guide
        评论=comment_review 视频排行=video_ranking 消息=message 邮件=email
        任务=task 项目=project 代码=code 仓库=repository 组件=component 图标=icon
        名称=name 编号=id_number 数量=count_number 页码=page 语言=language"""
    ).items()
}


# thing a tool acts on -> other words users say for it (both directions are listed)
NOUN_SYNONYMS: dict[str, tuple[str, ...]] = {
    "directory": ("folder",),
    "folder": ("directory",),
    "dir": ("directory", "folder"),
    "file": ("document",),
    "repo": ("repository",),
    "repository": ("repo", "project"),
    "image": ("picture", "photo"),
    "photo": ("picture", "image"),
    "picture": ("image", "photo"),
    "webpage": ("web page", "website", "site"),
    "page": ("web page",),
    "url": ("link", "web address", "website"),
    "link": ("url",),
    "email": ("mail", "message"),
    "mail": ("email",),
    "presentation": ("slides", "deck", "ppt", "powerpoint"),
    "slide": ("presentation", "ppt"),
    "pptx": ("powerpoint", "presentation"),
    "spreadsheet": ("excel", "sheet", "table"),
    "workbook": ("excel", "spreadsheet"),
    "sheet": ("spreadsheet", "excel"),
    "docx": ("word document",),
    "doc": ("document",),
    "issue": ("ticket", "bug"),
    "ticket": ("issue",),
    "stock": ("share price", "equity", "ticker"),
    "ticker": ("stock", "symbol"),
    "weather": ("forecast", "temperature"),
    "forecast": ("weather",),
    "video": ("clip", "movie"),
    "song": ("music", "track"),
    "music": ("song", "audio"),
    "audio": ("sound", "music"),
    "paper": ("article", "research", "publication"),
    "article": ("paper", "post"),
    "note": ("memo",),
    "event": ("meeting", "appointment"),
    "calendar": ("schedule", "agenda"),
    "contact": ("person", "people"),
    "user": ("account", "person"),
    "chart": ("graph", "plot", "diagram"),
    "graph": ("chart", "diagram"),
    "diagram": ("chart", "graph"),
    "map": ("location", "place"),
    "location": ("place", "address"),
    "route": ("directions", "path"),
    "translation": ("translate",),
    "commit": ("change", "revision"),
    "pr": ("pull request",),
    "container": ("docker",),
    "database": ("db", "sql", "table"),
    "table": ("database", "sql"),
    "query": ("sql",),
    "crypto": ("cryptocurrency", "bitcoin", "coin"),
    "price": ("cost", "quote", "value"),
    "current": ("now", "latest", "present"),
    "time": ("clock", "hour"),
    "timezone": ("time zone", "city"),
}


def canonical_verb(word: str) -> str | None:
    """The canonical action verb a name word stands for, or None."""
    if word in VERB_SYNONYMS:
        return word
    return VERB_ALIASES.get(word)


def verb_of(word: str) -> str | None:
    """The canonical verb of an inflected word: ``retrieves`` -> ``get``, ``computes`` ->
    ``compute``, ``synced`` -> ``sync``; None when it is not a known verb."""
    stems = [word]
    for suffix, add in (
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ed", ""),
        ("ed", "e"),
        ("d", ""),
        ("ing", ""),
        ("ing", "e"),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stems.append(word[: -len(suffix)] + add)
    for stem in stems:
        verb = canonical_verb(stem)
        if verb:
            return verb
    return None


def verb_synonyms(verb: str) -> tuple[str, ...]:
    return VERB_SYNONYMS.get(verb, ())


def noun_synonyms(word: str) -> tuple[str, ...]:
    """Other words for the thing ``word`` names (``folder`` for ``directory``); plurals too."""
    if word in NOUN_SYNONYMS:
        return NOUN_SYNONYMS[word]
    if word.endswith("s") and word[:-1] in NOUN_SYNONYMS:
        return NOUN_SYNONYMS[word[:-1]]
    return ()


# SQL statements a description names in capitals -> the words a user says for what they do
_SQL_STATEMENT = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b")
_SQL_CONTEXT = re.compile(r"\b(?:sql|sqlite|quer(?:y|ies)|statements?)\b", re.IGNORECASE)
_SQL_GLOSS = {
    "SELECT": ("read", "rows", "records"),
    "INSERT": ("add", "rows", "records"),
    "UPDATE": ("change", "rows", "records"),
    "DELETE": ("remove", "rows", "records"),
}


def sql_gloss(text: str) -> list[str]:
    """What the SQL statements named in ``text`` do, in a user's words ("Run an INSERT,
    UPDATE, or DELETE query" -> add, rows, records, change, remove): a user asks to "add a
    row", not to "run an INSERT". Only capitals in a text that speaks of SQL or queries count
    (an HTTP ``DELETE`` request is not a row)."""
    if not _SQL_CONTEXT.search(text):
        return []
    out: list[str] = []
    for statement in _SQL_STATEMENT.findall(text):
        out += [w for w in _SQL_GLOSS[statement] if w not in out]
    return out


def cjk_gloss(text: str) -> list[str]:
    """English words for the glossary terms found in ``text`` (longest match first)."""
    out: list[str] = []
    rest = text
    for term in sorted(CJK_GLOSSARY, key=lambda t: (-len(t), t)):
        if term in rest:
            for word in CJK_GLOSSARY[term].split():
                if word not in out:
                    out.append(word)
            rest = rest.replace(term, " ")
    return out


def domains_for(
    tool_words: list[list[str]], product_words: tuple[str, ...] = (), *, limit: int = 3
) -> list[str]:
    """Domain tags for a server, best first (ties by name).

    A domain counts the tools whose words hit its vocabulary (twice for the product name). It is
    kept when at least a fifth of the tools (at least one) hit it with two or more distinct
    vocabulary words across the server, or when the product name hits it.
    """
    need = max(1, -(-len(tool_words) // 5))
    scores: dict[str, int] = {}
    distinct: dict[str, set[str]] = {}
    for words in tool_words:
        hit = {name for name, vocab in DOMAINS.items() for w in words if w in vocab}
        for name in hit:
            scores[name] = scores.get(name, 0) + 1
            distinct.setdefault(name, set()).update(w for w in words if w in DOMAINS[name])
    by_product = {name for name, vocab in DOMAINS.items() for w in product_words if w in vocab}
    for name in by_product:
        scores[name] = scores.get(name, 0) + 2 * need
    kept = [
        n
        for n, score in scores.items()
        if n in by_product or (score >= need and len(distinct.get(n, ())) >= 2)
    ]
    return sorted(kept, key=lambda n: (-scores[n], n))[:limit]
