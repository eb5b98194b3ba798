#!/usr/bin/env python3
"""Seeded, vectorized generator of a synthetic ClickBench `hits` table (Parquet).

    python bench/clickbench/generate.py --rows 10000000 --seed 1 --out bench/data/clickbench/hits.parquet

The table has ClickBench's real schema: the 105 columns of ClickBench's create.sql, with their
names, order and types (SMALLINT -> int16, INTEGER -> int32, BIGINT -> int64, TEXT/VARCHAR/CHAR
-> utf8, EventDate -> date32, the three TIMESTAMP columns -> timestamp[us] without time zone
holding whole seconds; every column NOT NULL). Rows are written in row groups of --row-group
rows, sorted like ClickBench's hits.parquet by (CounterID, EventDate, UserID, EventTime, WatchID)
unless --unsorted. The output is a function of (--rows, --seed, --row-group): each row group
draws from its own seeded stream, so groups are generated two at a time on threads while the
main thread writes (10M rows: about a minute on 2 cores, ~1.2 GB with zstd).

The values are synthetic but shaped so that each of the 43 queries has something to find:
- counters (sites) follow a Zipf law; CounterID 62 is the biggest (about 12% of hits);
- users follow a flatter power law (the busiest user has ~0.05% of hits); UserID
  435090932899640449 (query 20) is one of the busier users; per-user attributes (region, OS,
  browser, screen, mobile phone model, IP, language, ...) are fixed per user;
- a URL is a counter's domain + a page path (Zipf over a pool) + a query suffix (mostly empty,
  a few per cent carry utm_source=google and similar); a few counters live on *.google.*
  domains; URLHash/RefererHash are consistent per string, and the two hashes the queries use
  (2868770270353813622 = counter 62's home page, 3594120000172545465 = its second page as a
  referer) are common;
- traffic sources decide Referer, SearchEngineID, SearchPhrase and AdvEngineID: ~84% of hits
  have an empty SearchPhrase; search hits carry a phrase from a Zipf pool (Russian and English
  words) and a search-engine referer; AdvEngineID is 0 for ~95% of hits;
- EventTime is spread over 2013-07-01..2013-07-31 with weekly and daily rhythm, EventDate is
  its date; titles are mostly Russian, a few mention Google; MobilePhoneModel is empty for
  non-mobile users (~90%).
Queries with absolute thresholds (HAVING COUNT(*) > 100000, OFFSET 10000) need ~10M rows to
return rows; smaller tables leave them empty.
"""

import argparse
import os
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

# ClickBench create.sql (duckdb/create.sql): name and type, in order.
SCHEMA_SQL = """
WatchID BIGINT, JavaEnable SMALLINT, Title TEXT, GoodEvent SMALLINT, EventTime TIMESTAMP,
EventDate DATE, CounterID INTEGER, ClientIP INTEGER, RegionID INTEGER, UserID BIGINT,
CounterClass SMALLINT, OS SMALLINT, UserAgent SMALLINT, URL TEXT, Referer TEXT,
IsRefresh SMALLINT, RefererCategoryID SMALLINT, RefererRegionID INTEGER,
URLCategoryID SMALLINT, URLRegionID INTEGER, ResolutionWidth SMALLINT,
ResolutionHeight SMALLINT, ResolutionDepth SMALLINT, FlashMajor SMALLINT, FlashMinor SMALLINT,
FlashMinor2 TEXT, NetMajor SMALLINT, NetMinor SMALLINT, UserAgentMajor SMALLINT,
UserAgentMinor TEXT, CookieEnable SMALLINT, JavascriptEnable SMALLINT, IsMobile SMALLINT,
MobilePhone SMALLINT, MobilePhoneModel TEXT, Params TEXT, IPNetworkID INTEGER,
TraficSourceID SMALLINT, SearchEngineID SMALLINT, SearchPhrase TEXT, AdvEngineID SMALLINT,
IsArtifical SMALLINT, WindowClientWidth SMALLINT, WindowClientHeight SMALLINT,
ClientTimeZone SMALLINT, ClientEventTime TIMESTAMP, SilverlightVersion1 SMALLINT,
SilverlightVersion2 SMALLINT, SilverlightVersion3 INTEGER, SilverlightVersion4 SMALLINT,
PageCharset TEXT, CodeVersion INTEGER, IsLink SMALLINT, IsDownload SMALLINT,
IsNotBounce SMALLINT, FUniqID BIGINT, OriginalURL TEXT, HID INTEGER, IsOldCounter SMALLINT,
IsEvent SMALLINT, IsParameter SMALLINT, DontCountHits SMALLINT, WithHash SMALLINT,
HitColor TEXT, LocalEventTime TIMESTAMP, Age SMALLINT, Sex SMALLINT, Income SMALLINT,
Interests SMALLINT, Robotness SMALLINT, RemoteIP INTEGER, WindowName INTEGER,
OpenerName INTEGER, HistoryLength SMALLINT, BrowserLanguage TEXT, BrowserCountry TEXT,
SocialNetwork TEXT, SocialAction TEXT, HTTPError SMALLINT, SendTiming INTEGER,
DNSTiming INTEGER, ConnectTiming INTEGER, ResponseStartTiming INTEGER,
ResponseEndTiming INTEGER, FetchTiming INTEGER, SocialSourceNetworkID SMALLINT,
SocialSourcePage TEXT, ParamPrice BIGINT, ParamOrderID TEXT, ParamCurrency TEXT,
ParamCurrencyID SMALLINT, OpenstatServiceName TEXT, OpenstatCampaignID TEXT,
OpenstatAdID TEXT, OpenstatSourceID TEXT, UTMSource TEXT, UTMMedium TEXT, UTMCampaign TEXT,
UTMContent TEXT, UTMTerm TEXT, FromTag TEXT, HasGCLID SMALLINT, RefererHash BIGINT,
URLHash BIGINT, CLID INTEGER
"""

ARROW_TYPES = {
    "SMALLINT": pa.int16(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "TEXT": pa.string(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us"),
}
NUMPY_TYPES = {"SMALLINT": np.int16, "INTEGER": np.int32, "BIGINT": np.int64}

COLUMNS = [tuple(c.split()) for c in SCHEMA_SQL.replace("\n", " ").split(",")]
assert len(COLUMNS) == 105, len(COLUMNS)
SCHEMA = pa.schema([pa.field(n, ARROW_TYPES[t], nullable=False) for n, t in COLUMNS])

EPOCH_2013_07_01 = 1372636800  # seconds, 2013-07-01 00:00:00 (no time zone)
DAYS = 31
SPECIAL_USER = 435090932899640449  # query 20
SPECIAL_URL_HASH = 2868770270353813622  # query 42: counter 62's home page
SPECIAL_REFERER_HASH = 3594120000172545465  # query 41: counter 62's second page as referer
INT32_SAFE = (-(2**31) + 16, 2**31 - 16)  # ClientIP - 3 must not overflow INTEGER

RU_WORDS = (
    "купить продажа цена недорого москва спб отзывы скачать бесплатно смотреть онлайн фильм "
    "сериал игра игры погода новости работа вакансии квартира аренда снять дом дача машина авто "
    "запчасти ремонт шины диски телефон смартфон ноутбук планшет телевизор холодильник "
    "стиральная машинка кредит банк ипотека курс доллара евро рецепт торт салат суп платье "
    "обувь сумка детские одежда книги музыка песни слушать карта метро расписание поезд "
    "самолет билеты отель туры отдых море турция египет школа гдз решебник реферат словарь "
    "перевод английский русский как сделать своими руками фото картинки видео новый 2013 "
    "официальный сайт вход регистрация личный кабинет почта порно знакомства гороскоп сонник "
    "лечение симптомы аптека врач больница стоматология юрист налог закон статья часть"
).split()
EN_WORDS = (
    "google youtube vk mail yandex skype windows android iphone samsung nokia sony lg apple "
    "ipad minecraft wot world of tanks gta counter strike opera chrome firefox torrent "
    "instagram facebook twitter odnoklassniki avito auto hh drom kinopoisk wiki online free "
    "download pdf mp3 hd 1080p test"
).split()
SECTIONS = (
    "news catalog products item forum blog articles video photo music games auto realty jobs "
    "sport weather search cart user profile help about contacts shop sale category tag "
    "archive page download files top rating review comments map city region ru en mobile"
).split()
SYLLABLES = (
    "ka ro mi to la zo ne vi ra sa ko po li da mo be ta ni gu re pa ve lo te ru su fa go "
    "de bo ma zi no ry cha sha ki lu"
).split()
TLDS = [".ru"] * 12 + [".com"] * 4 + [".net", ".ua", ".by", ".kz", ".org", ".su", ".info"]
GOOGLE_DOMAINS = ["maps.google.ru", "plus.google.com", "docs.google.com", "translate.google.ru"]
MOBILE_MODELS = (
    "iPad;iPhone;GT-I9300;GT-I9100;GT-S5830i;GT-N7100;GT-I8190;GT-P3110;Lumia 920;Lumia 800;"
    "HTC One;HTC Desire;Sony Xperia Z;Xperia S;Nexus 4;Nexus 7;LG-P760;MI-ONE;Galaxy Tab;"
    "Kindle Fire;A760;S4;U8850;MT11i;SM-T210;GT-S7562;GT-S5360;GT-I8160;N8;C6-00;E7-00;X2-00;"
    "Asha 302;Lenovo A800;Explay;Fly IQ4403;TF300T;ZTE V970;HUAWEI U8950;Alcatel OT-991"
).split(";")
SCREENS = [  # desktop (width, height, weight)
    (1920, 1080, 18), (1366, 768, 22), (1280, 1024, 12), (1600, 900, 7), (1440, 900, 7),
    (1280, 800, 6), (1024, 768, 7), (1680, 1050, 5), (1920, 1200, 3), (1360, 768, 4),
    (1280, 720, 2), (1536, 864, 2), (2560, 1440, 1), (1152, 864, 1), (800, 600, 1),
]
MOBILE_SCREENS = [(320, 480, 20), (360, 640, 20), (768, 1024, 25), (480, 800, 15),
                  (540, 960, 8), (720, 1280, 8), (1280, 800, 4)]
SEARCH_ENGINES = [  # (SearchEngineID, share, referer prefix, referer suffix)
    (2, 0.55, "http://yandex.ru/yandsearch?text=", "&lr=213"),
    (3, 0.27, "https://www.google.ru/search?q=", "&ie=utf-8&oe=utf-8"),
    (1, 0.05, "http://go.mail.ru/search?q=", "&fr=main"),
    (4, 0.04, "http://nova.rambler.ru/search?query=", ""),
    (5, 0.03, "http://www.bing.com/search?q=", "&form=QBLH"),
    (6, 0.02, "http://search.qip.ru/search?query=", ""),
    (7, 0.02, "http://nigma.ru/?s=", ""),
    (8, 0.01, "http://www.google.com.ua/search?q=", ""),
    (9, 0.01, "http://search.yahoo.com/search?p=", ""),
]
ADV_ENGINES = [(2, 0.42, "an.yandex.ru/count"), (27, 0.16, "googleads.g.doubleclick.net/aclk"),
               (13, 0.10, "ad.adriver.ru/cgi-bin/click"), (45, 0.08, "begun.ru/click"),
               (44, 0.06, "ads.adfox.ru/click"), (3, 0.05, "www.google.ru/aclk"),
               (52, 0.04, "kavanga.ru/click"), (50, 0.03, "marketgid.com/click"),
               (28, 0.03, "ads.targetix.net/go"), (41, 0.03, "luxup.ru/click")]
SOCIAL = [(1, "vk.com", 0.45), (2, "ok.ru", 0.2), (3, "www.facebook.com", 0.15),
          (4, "twitter.com", 0.08), (5, "my.mail.ru", 0.07), (6, "www.livejournal.com", 0.05)]
# TraficSourceID and its share: -1 internal, 0 direct, 1 link, 2 search, 3 ad, 4 bookmark,
# 5 mail, 6 social.
TRAFFIC = [(-1, 0.25), (0, 0.29), (1, 0.18), (2, 0.145), (3, 0.05), (4, 0.02), (5, 0.035),
           (6, 0.03)]
# URL query suffix: (text, weight, UTMSource, UTMMedium, UTMCampaign, FromTag, HasGCLID)
SUFFIXES = [
    ("", 860, "", "", "", "", 0),
    ("?utm_source=google&utm_medium=cpc&utm_campaign=brand", 9, "google", "cpc", "brand", "", 0),
    ("?utm_source=google&utm_medium=organic", 4, "google", "organic", "", "", 0),
    ("?gclid=CJ2f8dXQ9rcCFQ", 3, "", "", "", "", 1),
    ("?from=google", 3, "", "", "", "google", 0),
    ("?q=google+maps", 1, "", "", "", "", 0),
    ("?utm_source=yandex&utm_medium=cpc&utm_campaign=main", 15, "yandex", "cpc", "main", "", 0),
    ("?utm_source=vk&utm_medium=social", 5, "vk", "social", "", "", 0),
    ("?utm_source=email&utm_medium=newsletter&utm_campaign=july", 4, "email", "newsletter", "july", "", 0),
    ("?from=yandex", 6, "", "", "", "yandex", 0),
    ("?from=mail", 2, "", "", "", "mail", 0),
    ("?ref=rss", 3, "", "", "", "", 0),
    ("?sort=price", 8, "", "", "", "", 0),
    ("?sort=date&order=desc", 5, "", "", "", "", 0),
    ("?view=list", 4, "", "", "", "", 0),
    ("#comments", 5, "", "", "", "", 0),
    ("#top", 3, "", "", "", "", 0),
] + [(f"?page={p}", 24 // p, "", "", "", "", 0) for p in range(2, 10)] + [
    (f"?p={p}", 2, "", "", "", "", 0) for p in range(1, 8)]


def cdf_of(weights):
    w = np.asarray(weights, dtype=np.float64)
    c = np.cumsum(w / w.sum())
    c[-1] = 1.0
    return c


def draw(rng, cdf, size):
    """Indices drawn with the probabilities behind `cdf`."""
    return np.searchsorted(cdf, rng.random(size), side="right").astype(np.int32)


def zipf_weights(n, s, offset=1.0):
    return (np.arange(n, dtype=np.float64) + offset) ** -s


def mix64(x):
    """splitmix64 finalizer on uint64 (vectorized; wraps)."""
    z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def hash_of(codes):
    return mix64(codes).view(np.int64)


def unique_strings(make, count, max_tries=20):
    out, seen = [], set()
    for _ in range(max_tries):
        for s in make(count * 2):
            if s not in seen:
                seen.add(s)
                out.append(s)
                if len(out) == count:
                    return out
    raise RuntimeError("could not make enough distinct strings")


class Pools:
    """Everything that is fixed for the whole table: counters, users, pages, phrases."""

    def __init__(self, rows, seed):
        rng = np.random.default_rng([seed, 0xC11C])
        self.rows = rows
        # --- counters (sites) -------------------------------------------------------------
        C = int(np.clip(rows // 500, 200, 20000))
        self.C = C
        w = zipf_weights(C, 1.05)
        self.counter_cdf = cdf_of(w)
        ids = rng.choice(np.arange(1, 300000), size=C + 1, replace=False)
        ids = ids[ids != 62][: C - 1]
        self.counter_id = np.concatenate([[62], ids]).astype(np.int32)

        def domains(k):
            n_syl = rng.integers(2, 4, size=k)
            syl = rng.integers(0, len(SYLLABLES), size=(k, 4))
            tld = rng.integers(0, len(TLDS), size=k)
            sub = rng.random(k)
            for i in range(k):
                name = "".join(SYLLABLES[j] for j in syl[i, : n_syl[i]]) + TLDS[tld[i]]
                if sub[i] < 0.08:
                    name = SECTIONS[syl[i, 3] % len(SECTIONS)] + "." + name
                elif sub[i] < 0.12:
                    name = name.replace(".", f"{syl[i, 3]}.", 1)
                yield name

        dom = unique_strings(domains, C)
        # A few mid-sized counters live on Google domains (URL LIKE '%.google.%').
        for i, g in zip([7, 23, 41, 97], GOOGLE_DOMAINS):
            if i < C:
                dom[i] = g
        www = rng.random(C) < 0.35
        https = rng.random(C) < 0.08
        self.site_prefix = pa.array(
            [("https://" if h else "http://") + ("www." if ww else "") + d
             for d, ww, h in zip(dom, www, https)])
        self.site_name = pa.array(["Google" if d in GOOGLE_DOMAINS else d.split(".")[-2].capitalize()
                                   for d in dom])
        self.counter_class = rng.choice([0, 1, 2], size=C, p=[0.75, 0.2, 0.05]).astype(np.int16)
        self.counter_codever = rng.choice([0, 87, 164, 203, 260, 289, 359, 414, 512], size=C).astype(np.int32)
        self.counter_charset_utf8 = rng.random(C) < 0.55
        self.counter_url_category = rng.integers(0, 40, size=C).astype(np.int16)
        # --- regions -----------------------------------------------------------------------
        top_regions = [229, 2, 208, 169, 184, 158, 34, 55, 107, 42, 146, 225, 11, 39, 35, 14,
                       1, 13, 240, 22, 51, 47, 54, 62, 63, 65, 66, 67, 75, 76]
        more = rng.choice(np.setdiff1d(np.arange(1, 12000), top_regions), size=270, replace=False)
        self.regions = np.concatenate([top_regions, more]).astype(np.int32)
        self.region_cdf = cdf_of(zipf_weights(len(self.regions), 1.3))
        # --- users -------------------------------------------------------------------------
        U = int(max(1000, rows // 6))
        self.U = U
        self.user_s = 0.55
        uid = rng.integers(10**15, 2**63 - 1, size=U, dtype=np.int64)
        uid[50] = SPECIAL_USER
        self.uid = uid
        self.u_region = self.regions[draw(rng, self.region_cdf, U)]
        self.u_mobile = rng.random(U) < 0.10
        model_cdf = cdf_of(zipf_weights(len(MOBILE_MODELS), 0.9))
        model = draw(rng, model_cdf, U)
        self.u_model = np.where(self.u_mobile, model + 1, 0).astype(np.int32)  # 0 = ''
        phone = (model % 7) + 1 + (rng.random(U) < 0.15) * 7  # a model shows under 1-2 ids
        self.u_phone = np.where(self.u_mobile, phone, 0).astype(np.int16)
        scr = np.array(SCREENS)
        mscr = np.array(MOBILE_SCREENS)
        si = draw(rng, cdf_of(scr[:, 2]), U)
        mi = draw(rng, cdf_of(mscr[:, 2]), U)
        self.u_res_w = np.where(self.u_mobile, mscr[mi, 0], scr[si, 0]).astype(np.int16)
        self.u_res_h = np.where(self.u_mobile, mscr[mi, 1], scr[si, 1]).astype(np.int16)
        self.u_res_d = rng.choice([24, 32, 16], size=U, p=[0.55, 0.43, 0.02]).astype(np.int16)
        os_ids = rng.permutation(np.arange(1, 120))
        self.u_os = os_ids[draw(rng, cdf_of(zipf_weights(119, 1.4)), U)].astype(np.int16)
        ua_ids = rng.permutation(np.arange(1, 160))
        self.u_ua = ua_ids[draw(rng, cdf_of(zipf_weights(159, 1.3)), U)].astype(np.int16)
        self.u_ua_major = rng.integers(1, 40, size=U).astype(np.int16)
        self.u_ua_minor = rng.choice(8, size=U, p=[0.4, 0.2, 0.1, 0.1, 0.08, 0.06, 0.04, 0.02])
        self.ua_minor_pool = pa.array(["0", "1", "5", "6", "2", "3", "", "a"])
        self.u_ip = rng.integers(*INT32_SAFE, size=U, dtype=np.int64).astype(np.int32)
        self.u_ipnet = rng.integers(0, 4_000_000, size=U).astype(np.int32)
        self.u_java = (rng.random(U) < 0.35).astype(np.int16)
        self.u_cookie = (rng.random(U) < 0.97).astype(np.int16)
        self.u_js = (rng.random(U) < 0.98).astype(np.int16)
        self.u_flash_major = rng.choice([0, 11, 10, 9], size=U, p=[0.2, 0.65, 0.12, 0.03]).astype(np.int16)
        self.u_flash_minor = np.where(self.u_flash_major > 0, rng.integers(0, 9, size=U), 0).astype(np.int16)
        self.u_flash_minor2 = rng.choice(6, size=U, p=[0.3, 0.3, 0.2, 0.1, 0.05, 0.05])
        self.flash_minor2_pool = pa.array(["", "0", "1", "202", "152", "180"])
        self.u_net_major = rng.choice([0, 3, 4, 2], size=U, p=[0.5, 0.3, 0.15, 0.05]).astype(np.int16)
        self.u_net_minor = np.where(self.u_net_major > 0, rng.integers(0, 6, size=U), 0).astype(np.int16)
        sl = rng.random(U) < 0.3
        self.u_sl1 = np.where(sl, 5, 0).astype(np.int16)
        self.u_sl2 = np.where(sl, 1, 0).astype(np.int16)
        self.u_sl3 = np.where(sl, rng.choice([20513, 10411, 50906], size=U), 0).astype(np.int32)
        self.u_sl4 = np.where(sl, rng.choice([0, 1], size=U), 0).astype(np.int16)
        self.u_tz = rng.choice([3, 4, 2, 5, 6, 7, 1, 0, 8, 9], size=U,
                               p=[0.62, 0.08, 0.1, 0.05, 0.04, 0.03, 0.03, 0.02, 0.02, 0.01]).astype(np.int16)
        self.u_lang = rng.choice(6, size=U, p=[0.82, 0.06, 0.05, 0.03, 0.02, 0.02])
        self.lang_pool = pa.array(["ru", "en", "uk", "be", "kk", "de"])
        self.u_country = rng.choice(6, size=U, p=[0.8, 0.08, 0.05, 0.03, 0.02, 0.02])
        self.country_pool = pa.array(["ru", "ua", "by", "kz", "us", "de"])
        self.u_age = rng.choice([0, 1, 2, 3, 4, 5], size=U, p=[0.35, 0.1, 0.2, 0.18, 0.12, 0.05]).astype(np.int16)
        self.u_sex = rng.choice([0, 1, 2], size=U, p=[0.35, 0.33, 0.32]).astype(np.int16)
        self.u_income = rng.choice([0, 1, 2, 3, 4], size=U, p=[0.4, 0.2, 0.25, 0.1, 0.05]).astype(np.int16)
        self.u_interests = np.where(rng.random(U) < 0.6, rng.integers(1, 16000, size=U), 0).astype(np.int16)
        self.u_robot = np.where(rng.random(U) < 0.03, rng.integers(1, 10, size=U), 0).astype(np.int16)
        self.u_funiq = np.where(rng.random(U) < 0.7, rng.integers(1, 2**63 - 1, size=U, dtype=np.int64), 0)
        self.model_pool = pa.array([""] + MOBILE_MODELS)
        # --- pages ------------------------------------------------------------------------
        P = int(np.clip(rows // 50, 1000, 200000))
        self.P = P
        self.path_cdf = cdf_of(zipf_weights(P, 1.0))
        self.ref_path_cdf = cdf_of(zipf_weights(P, 1.15))

        def paths(k):
            kind = rng.random(k)
            a = rng.integers(0, len(SECTIONS), size=(k, 2))
            w = rng.integers(0, len(EN_WORDS), size=(k, 2))
            num = rng.integers(1, 10**7, size=k)
            for i in range(k):
                s1, s2 = SECTIONS[a[i, 0]], SECTIONS[a[i, 1]]
                if kind[i] < 0.35:
                    yield f"/{s1}/{EN_WORDS[w[i, 0]]}-{EN_WORDS[w[i, 1]]}-{num[i]}.html"
                elif kind[i] < 0.55:
                    yield f"/{s1}/{s2}/{num[i]}/"
                elif kind[i] < 0.75:
                    yield f"/{s1}/?id={num[i]}"
                elif kind[i] < 0.9:
                    yield f"/{s1}/{s2}/{EN_WORDS[w[i, 0]]}_{num[i] % 100000}"
                else:
                    yield f"/index.php?option=com_content&view=article&id={num[i]}&Itemid={num[i] % 977}"

        fixed = ["/", "/index.php", "/news/", "/catalog/", "/forum/", "/search/", "/video/",
                 "/photo/", "/login/", "/cart/"]
        self.paths = pa.array(fixed + unique_strings(paths, P - len(fixed)))
        S = len(SUFFIXES)
        self.S = S
        self.suffix_cdf = cdf_of([s[1] for s in SUFFIXES])
        self.suffixes = pa.array([s[0] for s in SUFFIXES])
        self.suffix_utm = [pa.array([s[k] for s in SUFFIXES]) for k in (2, 3, 4, 5)]
        self.suffix_gclid = np.array([s[6] for s in SUFFIXES], dtype=np.int16)
        self.suffix_google = np.array([s[2] == "google" for s in SUFFIXES])
        # Page titles: per path, plus the site name.
        T = int(np.clip(P // 10, 500, 20000))

        def titles(k):
            n_words = rng.integers(2, 7, size=k)
            ws = rng.integers(0, len(RU_WORDS), size=(k, 6))
            en = rng.integers(0, len(EN_WORDS), size=k)
            g = rng.random(k)
            for i in range(k):
                words = [RU_WORDS[j] for j in ws[i, : n_words[i]]]
                if g[i] < 0.02:
                    words.insert(int(ws[i, 5]) % len(words), "Google")
                elif g[i] < 0.025:
                    words.append("google")
                elif g[i] < 0.25:
                    words.insert(0, EN_WORDS[en[i]].capitalize())
                yield " ".join(words).capitalize() if g[i] >= 0.02 else " ".join(words)

        fixed_titles = ["Главная страница", "Новости", "Каталог товаров", "Форум", "Поиск",
                        "Видео", "Фотографии", "Вход на сайт", "Корзина", "Контакты"]
        self.titles = pa.array(fixed_titles + unique_strings(titles, T - len(fixed_titles)))
        self.T = T
        # --- search phrases ---------------------------------------------------------------
        PH = int(np.clip(rows // 30, 2000, 300000))

        def phrases(k):
            n_words = rng.choice([1, 2, 3, 4, 5], size=k, p=[0.12, 0.35, 0.3, 0.15, 0.08])
            ru = rng.integers(0, len(RU_WORDS), size=(k, 5))
            en = rng.integers(0, len(EN_WORDS), size=(k, 5))
            lang = rng.random((k, 5)) < 0.2
            num = rng.integers(1, 3000, size=k)
            has_num = rng.random(k) < 0.1
            for i in range(k):
                words = [EN_WORDS[en[i, j]] if lang[i, j] else RU_WORDS[ru[i, j]]
                         for j in range(n_words[i])]
                if has_num[i]:
                    words.append(str(num[i]))
                yield " ".join(words)

        fixed_phrases = ["карта россии", "скачать игры", "погода", "вконтакте", "одноклассники",
                         "google", "youtube", "авито", "смотреть онлайн", "гдз"]
        phrase_list = [""] + fixed_phrases + unique_strings(
            lambda k: (p for p in phrases(k) if p not in fixed_phrases), PH - len(fixed_phrases))
        self.PH = PH
        self.phrases = pa.array(phrase_list)  # index 0 = '' (no search)
        self.phrase_cdf = cdf_of(zipf_weights(PH, 1.0))
        self.phrases_quoted = pa.array([urllib.parse.quote_plus(p) for p in phrase_list])
        # --- other referers ---------------------------------------------------------------
        ad = np.array([a[1] for a in ADV_ENGINES])
        self.adv_ids = np.array([a[0] for a in ADV_ENGINES], dtype=np.int16)
        AD = 2000
        self.ad_engine = draw(rng, cdf_of(ad), AD)
        tok = rng.integers(10**8, 10**10, size=AD)
        self.ad_refs = pa.array([f"http://{ADV_ENGINES[e][2]}/{t}/" for e, t in zip(self.ad_engine, tok)])
        self.ad_cdf = cdf_of(zipf_weights(AD, 0.8))
        SO = 500
        so_net = draw(rng, cdf_of([s[2] for s in SOCIAL]), SO)
        so_tok = rng.integers(10**5, 10**9, size=SO)
        self.social_net = np.array([SOCIAL[i][0] for i in so_net], dtype=np.int16)
        self.social_pages = pa.array([f"/feed/{t}" if SOCIAL[i][0] == 1 else f"/group/{t}"
                                      for i, t in zip(so_net, so_tok)])
        self.social_refs = pc.binary_join_element_wise(
            pa.array([f"http://{SOCIAL[i][1]}" for i in so_net]), self.social_pages, "")
        self.social_cdf = cdf_of(zipf_weights(SO, 0.9))
        MA = 200
        mtok = rng.integers(10**6, 10**9, size=MA)
        self.mail_refs = pa.array(
            [("http://mail.yandex.ru/neo2/#inbox/thread/" if i % 2 == 0 else "https://e.mail.ru/message/") + str(t)
             for i, t in enumerate(mtok)])
        self.mail_cdf = cdf_of(zipf_weights(MA, 0.9))
        se = SEARCH_ENGINES
        self.se_ids = np.array([s[0] for s in se], dtype=np.int16)
        self.se_cdf = cdf_of([s[1] for s in se])
        self.se_prefix = pa.array([s[2] for s in se])
        self.se_suffix = pa.array([s[3] for s in se])
        # Daily rhythm: weight per minute of day (peak in the afternoon, low at night).
        minutes = np.arange(1440)
        hours = minutes / 60.0
        daily = 0.25 + np.exp(-((hours - 14.5) ** 2) / 18.0) + 0.5 * np.exp(-((hours - 21.0) ** 2) / 6.0)
        self.minute_cdf = cdf_of(daily)
        dow = (np.arange(DAYS) + 0) % 7  # 2013-07-01 is a Monday
        self.day_cdf = cdf_of(np.where(dow == 5, 0.78, np.where(dow == 6, 0.82, 1.0))
                              * (1 + 0.004 * np.arange(DAYS)))

    def draw_users(self, rng, size):
        """Power law over user ranks, closed form (continuous approximation)."""
        s, U = self.user_s, self.U
        u = rng.random(size)
        x = ((U ** (1 - s) - 1) * u + 1) ** (1 / (1 - s))
        return np.minimum(x.astype(np.int64) - 1, U - 1).astype(np.int32)


def page_code(counter_rank, path, suffix, P, S):
    return (np.uint64(1) << np.uint64(60)) | (
        (counter_rank.astype(np.uint64) * np.uint64(P) + path.astype(np.uint64)) * np.uint64(S)
        + suffix.astype(np.uint64))


def page_hash(counter_rank, path, suffix, P, S):
    h = hash_of(page_code(counter_rank, path, suffix, P, S))
    home = (counter_rank == 0) & (suffix == 0)
    h[home & (path == 0)] = SPECIAL_URL_HASH
    h[home & (path == 1)] = SPECIAL_REFERER_HASH
    return h


def choose(mask, a, b):
    """Strings: a where mask, else b (a, b: str or string arrays)."""
    return pc.if_else(pa.array(np.asarray(mask, dtype=bool)), a, b).cast(pa.string())


def scatter_strings(kinds, parts, n):
    """Row i gets the next string of parts[kinds[i]] (each part holds its kind's rows in order)."""
    order = np.argsort(kinds, kind="stable")
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    chunks = [parts[k] for k in sorted(parts)]
    return pa.concat_arrays([c.cast(pa.string()) for c in chunks]).take(inverse)


def keys(pools, rows, seed, sort):
    """The sort-key columns for the whole table (counter, day, second, user, WatchID)."""
    rng = np.random.default_rng([seed, 0xBEEF])
    counter = draw(rng, pools.counter_cdf, rows)
    day = draw(rng, pools.day_cdf, rows).astype(np.int16)
    minute = draw(rng, pools.minute_cdf, rows)
    sec = (minute * 60 + rng.integers(0, 60, size=rows)).astype(np.int32)
    user = pools.draw_users(rng, rows)
    watch = rng.integers(10**17, 2**63 - 1, size=rows, dtype=np.int64)
    if sort:
        # (CounterID, EventDate, UserID, EventTime) packed into one uint64 (19 + 5 + 21 + 17
        # bits), then WatchID: two sort keys instead of five.
        uid_rank = np.empty(pools.U, dtype=np.uint64)
        uid_rank[np.argsort(pools.uid)] = np.arange(pools.U, dtype=np.uint64)
        cid_rank = np.empty(pools.C, dtype=np.uint64)
        cid_rank[np.argsort(pools.counter_id)] = np.arange(pools.C, dtype=np.uint64)
        packed = (((cid_rank[counter] << np.uint64(5)) | day.astype(np.uint64)) << np.uint64(38)
                  | (uid_rank[user] << np.uint64(17)) | sec.astype(np.uint64))
        assert pools.U < 2**21 and pools.C < 2**19
        order = np.lexsort((watch, packed))
        del packed
        counter, day, sec, user, watch = (a[order] for a in (counter, day, sec, user, watch))
    return counter, day, sec, user, watch


def row_group(pools, seed, g, counter, day, sec, user, watch):
    p = pools
    n = len(counter)
    rng = np.random.default_rng([seed, 0xF00D, g])
    P, S = p.P, p.S
    cols = {}
    i16 = lambda a: np.asarray(a, dtype=np.int16)  # noqa: E731
    i32 = lambda a: np.asarray(a, dtype=np.int32)  # noqa: E731

    event_s = EPOCH_2013_07_01 + day.astype(np.int64) * 86400 + sec
    tz = p.u_tz[user].astype(np.int64)
    cols["WatchID"] = watch
    cols["EventTime"] = event_s * 1_000_000
    cols["EventDate"] = (EPOCH_2013_07_01 // 86400 + day).astype(np.int32)
    cols["CounterID"] = p.counter_id[counter]
    cols["UserID"] = p.uid[user]
    cols["RegionID"] = p.u_region[user]
    cols["ClientIP"] = np.where(rng.random(n) < 0.9, p.u_ip[user],
                                rng.integers(*INT32_SAFE, size=n, dtype=np.int64)).astype(np.int32)
    cols["RemoteIP"] = np.where(rng.random(n) < 0.95, cols["ClientIP"],
                                rng.integers(*INT32_SAFE, size=n, dtype=np.int64)).astype(np.int32)
    cols["IPNetworkID"] = p.u_ipnet[user]
    cols["JavaEnable"] = p.u_java[user]
    cols["GoodEvent"] = i16(rng.random(n) < 0.999)
    cols["CounterClass"] = p.counter_class[counter]
    cols["OS"] = p.u_os[user]
    cols["UserAgent"] = p.u_ua[user]
    cols["UserAgentMajor"] = p.u_ua_major[user]
    cols["UserAgentMinor"] = p.ua_minor_pool.take(p.u_ua_minor[user])
    cols["IsRefresh"] = i16(rng.random(n) < 0.07)
    cols["ResolutionWidth"] = p.u_res_w[user]
    cols["ResolutionHeight"] = p.u_res_h[user]
    cols["ResolutionDepth"] = p.u_res_d[user]
    cols["FlashMajor"] = p.u_flash_major[user]
    cols["FlashMinor"] = p.u_flash_minor[user]
    cols["FlashMinor2"] = p.flash_minor2_pool.take(p.u_flash_minor2[user])
    cols["NetMajor"] = p.u_net_major[user]
    cols["NetMinor"] = p.u_net_minor[user]
    cols["CookieEnable"] = p.u_cookie[user]
    cols["JavascriptEnable"] = p.u_js[user]
    cols["IsMobile"] = i16(p.u_mobile[user])
    cols["MobilePhone"] = p.u_phone[user]
    cols["MobilePhoneModel"] = p.model_pool.take(p.u_model[user])
    cols["Params"] = choose(rng.random(n) < 0.01, "p=1", "")

    # Pages: URL = site prefix + path + suffix.
    path = draw(rng, p.path_cdf, n)
    suffix = draw(rng, p.suffix_cdf, n)
    url = pc.binary_join_element_wise(p.site_prefix.take(counter), p.paths.take(path),
                                      p.suffixes.take(suffix), "")
    empty_url = rng.random(n) < 0.005
    cols["URL"] = pc.if_else(pa.array(empty_url), "", url)
    cols["URLHash"] = np.where(empty_url, hash_of(np.zeros(1, np.uint64))[0],
                               page_hash(counter, path, suffix, P, S))
    title_idx = np.where(path < 10, path, mix64(path.astype(np.uint64)) % np.uint64(p.T)).astype(np.int64)
    title = pc.binary_join_element_wise(p.titles.take(title_idx), p.site_name.take(counter), " - ")
    cols["Title"] = pc.if_else(pa.array(rng.random(n) < 0.03), "", title)
    cols["URLCategoryID"] = p.counter_url_category[counter]
    cols["URLRegionID"] = np.where(rng.random(n) < 0.7, cols["RegionID"], 0).astype(np.int32)
    cols["OriginalURL"] = pc.if_else(pa.array(rng.random(n) < 0.02), url, "")
    cols["UTMSource"], cols["UTMMedium"], cols["UTMCampaign"], cols["FromTag"] = (
        a.take(suffix) for a in p.suffix_utm)
    cols["UTMContent"] = choose(p.suffix_google[suffix], "ad1", "")
    cols["UTMTerm"] = choose(np.zeros(n, bool), "", "")
    cols["HasGCLID"] = p.suffix_gclid[suffix]

    # Traffic source decides Referer, search and advertising columns.
    tcdf = cdf_of([t[1] for t in TRAFFIC])
    tkind = draw(rng, tcdf, n)  # index into TRAFFIC
    trafic = np.array([t[0] for t in TRAFFIC], dtype=np.int16)[tkind]
    cols["TraficSourceID"] = trafic
    refhash = np.full(n, hash_of(np.zeros(1, np.uint64))[0], dtype=np.int64)
    parts = {}
    se_id = np.zeros(n, dtype=np.int16)
    adv_id = np.zeros(n, dtype=np.int16)
    phrase = np.zeros(n, dtype=np.int64)
    social_id = np.zeros(n, dtype=np.int16)
    social_page = np.full(n, -1, dtype=np.int64)
    ref_region = np.zeros(n, dtype=np.int32)
    ref_cat = np.zeros(n, dtype=np.int16)
    # internal (-1): another page of the same site
    m = np.flatnonzero(trafic == -1)
    rp = draw(rng, p.ref_path_cdf, len(m))
    parts[0] = pc.binary_join_element_wise(p.site_prefix.take(counter[m]), p.paths.take(rp), "")
    refhash[m] = page_hash(counter[m], rp, np.zeros(len(m), np.int32), P, S)
    ref_cat[m] = p.counter_url_category[counter[m]]
    # direct (0), bookmark (4): no referer
    parts[1] = choose(np.zeros(int(np.sum(trafic == 0)), bool), "", "")
    parts[5] = choose(np.zeros(int(np.sum(trafic == 4)), bool), "", "")
    # link (1): a page of another site
    m = np.flatnonzero(trafic == 1)
    oc = draw(rng, p.counter_cdf, len(m))
    rp = draw(rng, p.ref_path_cdf, len(m))
    parts[2] = pc.binary_join_element_wise(p.site_prefix.take(oc), p.paths.take(rp), "")
    refhash[m] = page_hash(oc, rp, np.zeros(len(m), np.int32), P, S)
    ref_cat[m] = p.counter_url_category[oc]
    ref_region[m] = p.regions[draw(rng, p.region_cdf, len(m))]
    # search (2): phrase + search engine
    m = np.flatnonzero(trafic == 2)
    se = draw(rng, p.se_cdf, len(m))
    ph = draw(rng, p.phrase_cdf, len(m)) + 1
    parts[3] = pc.binary_join_element_wise(p.se_prefix.take(se), p.phrases_quoted.take(ph),
                                           p.se_suffix.take(se), "")
    refhash[m] = hash_of((np.uint64(2) << np.uint64(60)) | (se.astype(np.uint64) * np.uint64(p.PH + 1) + ph.astype(np.uint64)))
    se_id[m] = p.se_ids[se]
    phrase[m] = ph
    ref_region[m] = cols["RegionID"][m]
    # advertising (3): ad network click; half of them carry the searched phrase
    m = np.flatnonzero(trafic == 3)
    ad = draw(rng, p.ad_cdf, len(m))
    parts[4] = p.ad_refs.take(ad)
    refhash[m] = hash_of((np.uint64(3) << np.uint64(60)) | ad.astype(np.uint64))
    adv_id[m] = p.adv_ids[p.ad_engine[ad]]
    phrase[m] = np.where(rng.random(len(m)) < 0.5, draw(rng, p.phrase_cdf, len(m)) + 1, 0)
    # mail (5)
    m = np.flatnonzero(trafic == 5)
    ma = draw(rng, p.mail_cdf, len(m))
    parts[6] = p.mail_refs.take(ma)
    refhash[m] = hash_of((np.uint64(5) << np.uint64(60)) | ma.astype(np.uint64))
    # social (6)
    m = np.flatnonzero(trafic == 6)
    so = draw(rng, p.social_cdf, len(m))
    parts[7] = p.social_refs.take(so)
    refhash[m] = hash_of((np.uint64(4) << np.uint64(60)) | so.astype(np.uint64))
    social_id[m] = p.social_net[so]
    social_page[m] = so
    cols["Referer"] = scatter_strings(tkind, parts, n)
    cols["RefererHash"] = refhash
    cols["RefererCategoryID"] = ref_cat
    cols["RefererRegionID"] = ref_region
    cols["SearchEngineID"] = se_id
    cols["AdvEngineID"] = adv_id
    cols["SearchPhrase"] = p.phrases.take(phrase)
    cols["SocialSourceNetworkID"] = social_id
    cols["SocialSourcePage"] = pc.if_else(pa.array(social_page >= 0),
                                          p.social_pages.take(np.maximum(social_page, 0)), "")
    share = rng.random(n) < 0.004
    cols["SocialNetwork"] = choose(share, choose(rng.random(n) < 0.6, "vkontakte", "facebook"), "")
    cols["SocialAction"] = choose(share, "share", "")

    cols["IsArtifical"] = i16(rng.random(n) < 0.01)
    broad = rng.random(n) < 0.4
    rw = cols["ResolutionWidth"].astype(np.int32)
    rh = cols["ResolutionHeight"].astype(np.int32)
    ww = np.where(broad, (rng.random(n) * (rw - 300) + 300).astype(np.int32),
                  rw - rng.choice([0, 17, 20, 16, 0], size=n))
    wh = np.where(broad, (rng.random(n) * (rh - 150) + 150).astype(np.int32),
                  rh - rng.integers(60, 240, size=n))
    zero = rng.random(n) < 0.02
    cols["WindowClientWidth"] = i16(np.where(zero, 0, np.maximum(ww, 0)))
    cols["WindowClientHeight"] = i16(np.where(zero, 0, np.maximum(wh, 0)))
    cols["ClientTimeZone"] = i16(tz * 60)
    cols["ClientEventTime"] = (event_s + (tz - 3) * 3600 + rng.integers(-30, 31, size=n)) * 1_000_000
    cols["LocalEventTime"] = (event_s + (tz - 3) * 3600) * 1_000_000
    cols["SilverlightVersion1"] = p.u_sl1[user]
    cols["SilverlightVersion2"] = p.u_sl2[user]
    cols["SilverlightVersion3"] = p.u_sl3[user]
    cols["SilverlightVersion4"] = p.u_sl4[user]
    cols["PageCharset"] = choose(p.counter_charset_utf8[counter], "utf-8", "windows-1251")
    cols["CodeVersion"] = p.counter_codever[counter]
    cols["IsLink"] = i16(rng.random(n) < 0.05)
    cols["IsDownload"] = i16(rng.random(n) < 0.01)
    cols["IsNotBounce"] = i16(rng.random(n) < 0.55)
    cols["FUniqID"] = p.u_funiq[user]
    cols["HID"] = i32(rng.integers(1, 2**31 - 1, size=n))
    cols["IsOldCounter"] = i16(rng.random(n) < 0.02)
    cols["IsEvent"] = i16(rng.random(n) < 0.02)
    cols["IsParameter"] = i16(rng.random(n) < 0.01)
    cols["DontCountHits"] = i16(rng.random(n) < 0.04)
    cols["WithHash"] = i16(rng.random(n) < 0.03)
    cols["HitColor"] = pa.array(["5", "D", "E", "F"]).take(draw(rng, cdf_of([0.7, 0.1, 0.1, 0.1]), n))
    cols["Age"] = p.u_age[user]
    cols["Sex"] = p.u_sex[user]
    cols["Income"] = p.u_income[user]
    cols["Interests"] = p.u_interests[user]
    cols["Robotness"] = p.u_robot[user]
    cols["WindowName"] = i32(np.where(rng.random(n) < 0.5, -1, rng.integers(0, 2**31 - 1, size=n)))
    cols["OpenerName"] = i32(np.where(rng.random(n) < 0.7, -1, rng.integers(0, 2**31 - 1, size=n)))
    cols["HistoryLength"] = i16(np.minimum(rng.geometric(0.3, size=n) - 1, 50))
    cols["BrowserLanguage"] = p.lang_pool.take(p.u_lang[user])
    cols["BrowserCountry"] = p.country_pool.take(p.u_country[user])
    cols["HTTPError"] = i16(np.where(rng.random(n) < 0.003, rng.choice([404, 500, 403, 502], size=n), 0))
    timed = rng.random(n) < 0.35
    base = rng.lognormal(5.0, 1.0, size=n)
    for name, f in (("SendTiming", 0.05), ("DNSTiming", 0.2), ("ConnectTiming", 0.3),
                    ("ResponseStartTiming", 1.0), ("ResponseEndTiming", 1.3), ("FetchTiming", 0.8)):
        cols[name] = i32(np.where(timed, np.minimum(base * f * rng.uniform(0.5, 1.5, size=n), 2e6), 0))
    priced = rng.random(n) < 0.005
    cols["ParamPrice"] = np.where(priced, rng.integers(100, 10**6, size=n), 0).astype(np.int64)
    order_no = pa.array(rng.integers(1, 10**6, size=n)).cast(pa.string())
    cols["ParamOrderID"] = choose(priced, pc.binary_join_element_wise("order-", order_no, ""), "")
    cols["ParamCurrency"] = choose(priced, "RUB", "")
    cols["ParamCurrencyID"] = i16(np.where(priced, 643, 0))
    openstat = rng.random(n) < 0.002
    cols["OpenstatServiceName"] = choose(openstat, "direct.yandex.ru", "")
    cols["OpenstatCampaignID"] = choose(openstat, "1234", "")
    cols["OpenstatAdID"] = choose(openstat, "5678", "")
    cols["OpenstatSourceID"] = choose(openstat, "news.ru", "")
    cols["CLID"] = i32(np.where(rng.random(n) < 0.05, rng.choice([1955453, 2063712, 9034, 1985551], size=n), 0))

    arrays = []
    for name, ty in COLUMNS:
        v = cols[name]
        if isinstance(v, (pa.Array, pa.ChunkedArray)):
            arrays.append(v.cast(pa.string()) if v.type != pa.string() else v)
        elif ty == "TIMESTAMP":
            arrays.append(pa.array(np.asarray(v, dtype=np.int64), type=pa.timestamp("us")))
        elif ty == "DATE":
            arrays.append(pa.array(np.asarray(v, dtype=np.int32), type=pa.date32()))
        elif ty == "TEXT":
            arrays.append(pa.array(v, type=pa.string()))
        else:
            arrays.append(pa.array(np.asarray(v, dtype=NUMPY_TYPES[ty])))
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="bench/data/clickbench/hits.parquet")
    ap.add_argument("--row-group", type=int, default=1_000_000, help="rows per row group")
    ap.add_argument("--compression", default="zstd")
    ap.add_argument("--unsorted", action="store_true",
                    help="keep generation order instead of ClickBench's key order")
    args = ap.parse_args()
    t0 = time.perf_counter()
    pools = Pools(args.rows, args.seed)
    t1 = time.perf_counter()
    k = keys(pools, args.rows, args.seed, not args.unsorted)
    t2 = time.perf_counter()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    starts = list(range(0, args.rows, args.row_group))

    def make(g):
        start = starts[g]
        end = min(start + args.row_group, args.rows)
        return row_group(pools, args.seed, g, *(a[start:end] for a in k))

    # Two groups are generated ahead on threads (NumPy and Arrow release the GIL) while the
    # main thread writes, in order.
    with pq.ParquetWriter(tmp, SCHEMA, compression=args.compression) as w, \
            ThreadPoolExecutor(max_workers=2) as ex:
        pending = [ex.submit(make, g) for g in range(min(2, len(starts)))]
        for g in range(len(starts)):
            table = pending.pop(0).result()
            if g + 2 < len(starts):
                pending.append(ex.submit(make, g + 2))
            w.write_table(table, row_group_size=args.row_group)
            del table
            print(f"  row group {g + 1}/{len(starts)} written ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)
    os.replace(tmp, args.out)
    size = os.path.getsize(args.out)
    print(f"wrote {args.out}: {args.rows} rows, {size / 1e6:.0f} MB in "
          f"{time.perf_counter() - t0:.1f} s (pools {t1 - t0:.1f} s, keys {t2 - t1:.1f} s)")


if __name__ == "__main__":
    main()
